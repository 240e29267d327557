import { describe, expect, it } from 'vitest';
import { openForAll } from '../support/open-for-all.js';
import { sendSigned, type RecordedCall } from '../emulators/slack/index.js';
import { botMention, chatCalls, say, startSlackBridge, W, type SlackHarness } from './harness.js';

interface Answer {
  call: RecordedCall;
  text: string;
  blocks: Array<{ type: string; text?: { text: string } }>;
}

/** Runs `/agent <text>` and returns the ephemeral answer posted to its response_url. */
async function run(h: SlackHarness, text: string, user: string, channel: string = W.general): Promise<Answer> {
  const ack = await h.to.command({ text, user, channel });
  expect(ack.acked).toBe(true);
  const call = await h.slack.waitForCall('response_url', (c) => c.response.id === ack.responseUrlId);
  expect(call.params.response_type).toBe('ephemeral');
  const blocks = JSON.parse(call.params.blocks ?? '[]') as Answer['blocks'];
  return { call, text: blocks.map((b) => b.text?.text ?? '').join('\n'), blocks };
}

const ADMIN_COMMANDS = ['instances', 'bind demo-poet', 'unbind', 'status', 'set errors reaction', 'why', 'audit', 'credential demo-helper'];

describe.each(['http', 'socket'] as const)('/agent over %s', (mode) => {
  let h: SlackHarness;
  openForAll(async () => (h = await startSlackBridge({ mode })));

  it('answers help to anyone, for a bare command and an unknown one too', async () => {
    for (const text of ['help', '', 'frobnicate']) {
      const a = await run(h, text, W.user);
      expect(a.text).toContain('agent-bridge commands');
      expect(a.text).toContain('/agent bind &lt;instance-id&gt;');
    }
    expect((await run(h, 'frobnicate', W.user)).text).toContain('Unknown command');
  });

  it.each(ADMIN_COMMANDS)('refuses `%s` to a non-admin, ephemerally', async (text) => {
    const a = await run(h, text, W.user);
    expect(a.text).toContain('Only admins can use /agent');
    expect(a.text).toContain(text.split(' ')[0]);
    expect(h.slack.callsOf('views.open')).toHaveLength(0);
  });

  it('lists instances for an admin as a Block Kit table', async () => {
    const a = await run(h, 'instances', W.admin);
    expect(a.text).toContain('*Instances*');
    expect(a.text).toMatch(/```[\s\S]*demo-helper[\s\S]*```/);
  });

  it('binds, shows status, sets, explains why, audits and unbinds for an admin', async () => {
    const channel = mode === 'http' ? 'C0CMDHTTP' : 'C0CMDSOCK';
    expect((await run(h, 'bind demo-poet all', W.admin, channel)).text).toContain('demo-poet');
    expect(await h.bridge.bindings.get('slack', channel)).toMatchObject({ instanceId: 'demo-poet', mode: 'all' });
    expect((await run(h, 'status', W.admin, channel)).text).toContain('demo-poet');
    expect((await run(h, 'set errors reaction', W.admin, channel)).blocks.length).toBeGreaterThan(0);
    expect((await h.bridge.bindings.get('slack', channel))?.errorPolicy).toBe('reaction');
    expect((await run(h, 'why', W.admin, channel)).blocks.length).toBeGreaterThan(0);
    const audit = await run(h, 'audit', W.admin, channel);
    expect(audit.text).toContain('bind');
    await run(h, 'unbind', W.admin, channel);
    expect(await h.bridge.bindings.get('slack', channel)).toBeUndefined();
  });

  it.each([
    ['set errors reaction extra', /Too many words: `extra`\. Use `set errors reply\|reaction\|silent`/],
    ['set errors loud', /not `loud`/],
    ['set quota user-per-minute many', /not `many`/],
    ['unbind now', /Too many words: `now`\. Use `unbind`/],
    ['why now please', /Too many words: `now please`\. Use `why`/],
    ['audit 5', /Too many words: `5`\. Use `audit`/],
    ['bind demo-poet all extra', /Too many words: `extra`/],
    ['set', /`set prompts …`/],
    ['set frob 1', /There is no setting `frob`[\s\S]*`set prompts/],
  ])('refuses `%s` naming the word it stops at, and changes nothing', async (text, words) => {
    const channel = mode === 'http' ? 'C0WORDHTTP' : 'C0WORDSOCK';
    await run(h, 'bind demo-helper', W.admin, channel);
    const before = await h.bridge.bindings.get('slack', channel);
    const a = await run(h, text, W.admin, channel);
    expect(a.text).toMatch(words);
    expect(await h.bridge.bindings.get('slack', channel)).toEqual(before);
  });

  it.each(['`demo-poet`', '"demo-poet"', '“demo-poet”'])('takes the instance ID %s without what surrounds it', async (typed) => {
    const channel = mode === 'http' ? 'C0QUOTHTTP' : 'C0QUOTSOCK';
    const a = await run(h, `bind ${typed}`, W.admin, channel);
    expect(a.text).toContain('now talks to `Demo Poet` (`demo-poet`)');
    expect(await h.bridge.bindings.get('slack', channel)).toMatchObject({ instanceId: 'demo-poet' });
    await run(h, 'unbind', W.admin, channel);
  });

  it('lets a workspace owner (per users.info) run admin commands', async () => {
    const a = await run(h, 'instances', W.owner);
    expect(a.text).toContain('*Instances*');
    expect(h.slack.callsOf('users.info', (c) => c.params.user === W.owner).length).toBeGreaterThanOrEqual(1);
  });

  it("binds the workspace's DM binding when run in a DM, leaving the deployment-wide `dm` default alone", async () => {
    await run(h, 'bind demo-poet', W.admin, 'D0ADMIN01');
    expect((await h.bridge.bindings.get('slack', `dm:${h.slack.identity.teamId}`))?.instanceId).toBe('demo-poet');
    expect((await h.bridge.bindings.get('slack', 'dm'))?.instanceId).toBe('demo-helper');
    await run(h, 'bind demo-helper', W.admin, 'D0ADMIN01');
  });

  it("says in a DM that the workspace's direct messages with the bot are bound, with no channel mode", async () => {
    const dm = mode === 'http' ? 'D0DMWORDS1' : 'D0DMWORDS2';
    const bound = await run(h, 'bind demo-poet all', W.admin, dm);
    expect(bound.text).toMatch(/Direct messages with the bot in this workspace now go to `Demo Poet` \(`demo-poet`\)/);
    expect(bound.text).not.toMatch(/This channel|Mode `|mentioned/);
    const status = await run(h, 'status', W.admin, dm);
    expect(status.text).toMatch(/Direct messages with the bot in this workspace: bound to `demo-poet`/);
    expect(status.text).not.toMatch(/this channel|Mode `/i);
    const unbound = await run(h, 'unbind', W.admin, dm);
    expect(unbound.text).toMatch(/Direct messages with the bot in this workspace no longer go to `demo-poet`/);
    expect(unbound.text).not.toMatch(/This channel/);
    const nothing = await run(h, 'unbind', W.admin, dm);
    expect(nothing.text).toMatch(/Direct messages with the bot in this workspace aren't bound/);
    await run(h, 'bind demo-helper', W.admin, dm);
  });

  it('opens the credential modal for an admin without answering in the channel', async () => {
    const ack = await h.to.command({ text: 'credential demo-helper', user: W.admin, channel: W.general });
    const open = await h.slack.waitForCall('views.open', (c) => c.params.trigger_id === ack.triggerId);
    expect(open.response.ok).toBe(true);
    expect(h.slack.callsOf('response_url', (c) => c.response.id === ack.responseUrlId)).toHaveLength(0);
  });

  it('answers setup under the default AGENT_ACCOUNT_MODE=shared with nothing to set up, and opens no key form', async () => {
    const ack = await h.to.command({ text: 'setup', user: W.admin, channel: W.general });
    const call = await h.slack.waitForCall('response_url', (c) => c.response.id === ack.responseUrlId);
    expect(call.params.blocks).toContain('AGENT_ACCOUNT_MODE=shared');
    expect(call.params.blocks).toContain('nothing to set up here');
    expect(h.slack.callsOf('views.open', (c) => c.params.trigger_id === ack.triggerId)).toHaveLength(0);
  });
});

describe('/agent with SLACK_WORKSPACE_ADMINS=false', () => {
  let h: SlackHarness;
  openForAll(async () => (h = await startSlackBridge({ mode: 'http', env: { SLACK_WORKSPACE_ADMINS: 'false' } })));

  it('refuses a workspace owner who is not listed, and never asks users.info', async () => {
    expect((await run(h, 'instances', W.owner)).text).toContain('Only admins');
    expect((await run(h, 'instances', W.admin)).text).toContain('*Instances*');
    expect(h.slack.callsOf('users.info')).toHaveLength(0);
  });
});

describe('POST /slack/events signatures', () => {
  let h: SlackHarness;
  openForAll(async () => (h = await startSlackBridge({ mode: 'http' })));

  it.each(['bad', 'stale', 'missing'] as const)('refuses a %s signature with 401 and does nothing', async (signature) => {
    const before = chatCalls(h).length;
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} forged` });
    const event = await h.to.event(m.mention, { signature });
    expect(event.status).toBe(401);
    const command = await h.to.command({ text: 'unbind', user: W.admin, channel: W.general }, signature);
    expect(command.status).toBe(401);
    const interaction = await h.to.interaction({ type: 'block_actions', user: { id: W.admin }, actions: [] }, signature);
    expect(interaction.status).toBe(401);
    // A good request afterwards is answered, and the forged ones left no trace.
    const ok = await say(h, { channel: W.general, text: `${botMention(h)} genuine` });
    await h.slack.waitForCall('chat.postMessage', (c) => c.params.thread_ts === ok.ts && c.response.ok === true);
    expect(chatCalls(h).length).toBe(before + 1);
    expect(h.slack.callsOf('response_url')).toHaveLength(0);
    expect((await h.bridge.bindings.get('slack', W.general))?.instanceId).toBe('demo-helper');
  });

  it('answers Slack’s URL verification challenge', async () => {
    const body = JSON.stringify({ token: 't', challenge: 'chal-123', type: 'url_verification' });
    const r = await sendSigned(h.eventsUrl, h.slack.identity.signingSecret, body, 'application/json');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ challenge: 'chal-123' });
  });

  it('acks a slash command meant for another name and says what to fix', async () => {
    const r = await h.to.command({ text: 'help', user: W.admin, channel: W.general, command: '/other' });
    expect(r.status).toBe(200);
    expect(JSON.stringify(r.body)).toContain('This app answers /agent');
  });

  it('survives malformed payloads that are correctly signed', async () => {
    const send = (body: string, type: 'application/json' | 'application/x-www-form-urlencoded') => sendSigned(h.eventsUrl, h.slack.identity.signingSecret, body, type);
    const form = (payload: unknown) => new URLSearchParams({ payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }).toString();
    const results = [
      await send('not json', 'application/json'),
      await send('{"type":"event_callback","event":null}', 'application/json'),
      await send(JSON.stringify({ type: 'event_callback', team_id: 'T', event: { type: 'message', channel: ['C'], ts: {}, text: 5 } }), 'application/json'),
      await send(form('{broken'), 'application/x-www-form-urlencoded'),
      await send(form({ type: 'view_submission', view: { callback_id: 'agent_bridge_credential' } }), 'application/x-www-form-urlencoded'),
      await send(form({ type: 'view_submission', user: { id: W.admin }, view: { callback_id: 'agent_bridge_credential', private_metadata: '{"i":1}', state: { values: 7 } } }), 'application/x-www-form-urlencoded'),
      await send(new URLSearchParams({ command: '/agent', text: 'x'.repeat(10_000), user_id: W.user, channel_id: W.general, response_url: 'http://127.0.0.1:9/none', trigger_id: 't' }).toString(), 'application/x-www-form-urlencoded'),
    ];
    for (const r of results) expect([200, 400]).toContain(r.status);
    // Slack redelivers any non-2xx 3 times unless told not to: these would fail the same way again.
    expect(results.filter((r) => r.status === 400).length).toBeGreaterThan(0);
    for (const r of results.filter((x) => x.status === 400)) expect(r.noRetry).toBe('1');
    const ok = await say(h, { channel: W.general, text: `${botMention(h)} still alive?` });
    await h.slack.waitForCall('chat.postMessage', (c) => c.params.thread_ts === ok.ts && c.response.ok === true);
  });

  it('answers 503 once stopped', async () => {
    await h.adapter.stop();
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: 'late' });
    expect((await h.to.event(m.message)).status).toBe(503);
  });
});
