import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { INPUT_ACTION, KEY_BLOCK, VALUE_BLOCK } from '../../adapters/slack/credential-modal.js';
import { eventEnvelope, slashCommand } from '../emulators/slack/payloads.js';
import { formBody } from '../emulators/slack/sender.js';
import { startCanaryBridge, SW, type CanaryBridge } from './support/canary-bridge.js';
import { sleep, until, watchProcessErrors } from './support/guards.js';
import { figures } from './support/ledger.js';

/**
 * Who may do what: every admin command from a non-admin is refused on Slack and Discord (and
 * changes nothing), the credentials endpoint is never called with the API key alone, and forged
 * Slack requests (bad signature, stale or future timestamp, replayed, tampered) are refused.
 */
let b: CanaryBridge;
const guard = watchProcessErrors();

beforeAll(async () => {
  b = await startCanaryBridge('http', { LOG_LEVEL: 'debug' });
  b.slack.addUser({ id: 'UWSADMIN1', name: 'Workspace Admin', isAdmin: true });
  b.slack.addUser({ id: 'UFLAKY001', name: 'Flaky Lookup' });
});
afterAll(async () => {
  guard.stop();
  await b?.close();
  expect(guard.errors).toEqual([]);
});

const ADMIN_TEXT = ['instances', 'bind demo-poet all', 'unbind', 'status', 'credential demo-helper', 'set errors silent', 'set quota user-per-minute 1', 'why', 'audit'];
const DISCORD_SUBS: Array<[string, Record<string, string>]> = [
  ['instances', {}],
  ['bind', { instance: 'demo-poet', mode: 'all' }],
  ['unbind', {}],
  ['status', {}],
  ['credential', { instance: 'demo-helper' }],
  ['set', { setting: 'errors', value: 'silent' }],
  ['why', {}],
  ['audit', {}],
];

async function slackAnswer(text: string, user: string, channel: string = SW.general): Promise<string> {
  const ack = await b.to.command({ text, user, channel });
  expect(ack.acked).toBe(true);
  const call = await b.slack.waitForCall('response_url', (c) => c.response.id === ack.responseUrlId, 10_000);
  return call.params.blocks ?? call.params.text ?? '';
}

describe('admin commands from non-admins', () => {
  it('Slack: every admin command is refused, ephemerally, and changes nothing', async () => {
    const bindingBefore = await b.bridge.bindings.get('slack', SW.general);
    const agentBefore = b.agent.calls.length;
    for (const text of ADMIN_TEXT) {
      const answer = await slackAnswer(text, SW.user);
      expect(answer, text).toMatch(new RegExp(`Only admins can use /agent ${text.split(' ')[0]}`));
    }
    // Refused also when Slack cannot say whether the user is an admin.
    b.slack.fail('users.info', { error: 'ratelimited', retryAfterSeconds: 1, times: 1 });
    expect(await slackAnswer('unbind', 'UFLAKY001')).toMatch(/Slack didn't let me check your admin rights just now, so I can't run `\/agent unbind`/);
    expect(b.slack.callsOf('views.open')).toHaveLength(0);
    expect(await b.bridge.bindings.get('slack', SW.general)).toEqual(bindingBefore);
    expect(b.agent.calls.slice(agentBefore)).toEqual([]);
    // A workspace admin (users.info) and a listed admin are let through.
    expect(await slackAnswer('status', 'UWSADMIN1')).not.toMatch(/Only admins/);
    expect(await slackAnswer('status', SW.admin)).not.toMatch(/Only admins/);
  }, 60_000);

  it('Slack: a forged credential form submission from a non-admin is refused and never reaches the service', async () => {
    const before = b.agent.calls.filter((c) => c.endpoint === 'credentials').length;
    const payload = {
      type: 'view_submission',
      team: { id: 'T0EMU' },
      user: { id: SW.user, name: 'uma' },
      view: {
        id: 'VFORGED',
        callback_id: 'agent_bridge_credential',
        private_metadata: JSON.stringify({ i: 'demo-helper', c: SW.general }),
        state: { values: { [KEY_BLOCK]: { [INPUT_ACTION]: { value: 'STOLEN' } }, [VALUE_BLOCK]: { [INPUT_ACTION]: { value: 'forged-value-123' } } } },
      },
    };
    const ack = await b.to.interaction(payload);
    expect(JSON.stringify(ack.body)).toMatch(/Only admins/);
    expect(b.agent.calls.filter((c) => c.endpoint === 'credentials').length).toBe(before);
  });

  it('Discord: every admin command is refused for a member without Manage Server or an admin role, and in DMs', async () => {
    const w = b.discord.world;
    const bindingBefore = await b.bridge.bindings.get('discord', w.channels.general.id);
    const agentBefore = b.agent.calls.length;
    const refusals: string[] = [];
    for (const [sub, options] of DISCORD_SUBS) {
      for (const [user, channel] of [[w.users.bob, w.channels.general], [w.users.alice, w.channels.dmAlice]] as const) {
        const i = b.discord.runCommand({ user, channel, subcommand: sub, options });
        const text = await b.discord.waitFor(() => i.original?.content, `${sub} answer`, 10_000);
        refusals.push(text);
        // In a DM nobody is an admin: the answer says where /agent works instead.
        expect(text, `${sub} by ${user.username}`).toMatch(user === w.users.bob ? /only admins/i : /works in a server channel/);
        expect(i.original?.flags).toBe(64);
        expect(i.responses.some((r) => r.type === 9)).toBe(false);
      }
    }
    // The credential form submitted anyway (a forged modal submit) is refused too.
    const forged = b.discord.submitModal({ user: w.users.bob, channel: w.channels.general, customId: 'agent:credential:demo-helper', fields: { key: 'STOLEN', value: 'forged-value-456' } });
    expect(await b.discord.waitFor(() => forged.original?.content, 'forged modal')).toMatch(/only admins/i);
    // Autocomplete lists nothing to them.
    const ac = b.discord.autocomplete({ user: w.users.bob, channel: w.channels.general, subcommand: 'bind', focused: 'instance', options: { instance: '' } });
    expect((await b.discord.waitFor(() => ac.responses.find((r) => r.type === 8), 'autocomplete')).data.choices).toEqual([]);
    expect(await b.bridge.bindings.get('discord', w.channels.general.id)).toEqual(bindingBefore);
    expect(b.agent.calls.slice(agentBefore).filter((c) => c.endpoint !== 'instances')).toEqual([]);
    // Admin by role and by permission are let through.
    const carol = b.discord.runCommand({ user: w.users.carol, channel: w.channels.general, subcommand: 'status' });
    expect(await b.discord.waitFor(() => carol.original?.content, 'carol status')).not.toMatch(/only admins/i);
    figures('access-refusals', { slackCommands: ADMIN_TEXT.length, discordCommands: refusals.length, allRefused: true });
  }, 60_000);
});

describe('the credentials endpoint', () => {
  it('is only ever called with the dashboard session, never with the API key alone', async () => {
    const w = b.discord.world;
    // One accepted credential on each platform, so there are calls to look at.
    const ack = await b.to.command({ text: 'credential demo-helper', user: SW.admin, channel: SW.general });
    const open = await b.slack.waitForCall('views.open', (c) => c.params.trigger_id === ack.triggerId);
    const viewId = (open.response.view as { id: string }).id;
    await b.to.interaction(b.slack.viewSubmission(viewId, SW.admin, { [KEY_BLOCK]: { [INPUT_ACTION]: 'K1' }, [VALUE_BLOCK]: { [INPUT_ACTION]: 'value-one-1' } }));
    const submit = b.discord.submitModal({ user: w.users.alice, channel: w.channels.general, customId: 'agent:credential:demo-helper', fields: { key: 'K2', value: 'value-two-2' } });
    await b.discord.waitFor(() => submit.original?.content, 'discord credential');
    const calls = b.agent.calls.filter((c) => c.endpoint === 'credentials');
    expect(calls.length).toBeGreaterThanOrEqual(2);
    for (const c of calls) {
      expect(c.headers['x-api-key'], 'credentials call carried X-API-Key').toBeUndefined();
      expect(c.headers.cookie === b.canaries.AGENT_SESSION_COOKIE || c.headers.authorization === `Bearer ${b.canaries.AGENT_SESSION_TOKEN}`).toBe(true);
    }
    expect(b.agent.credentials.get('demo-helper')?.get('K1')).toBe('value-one-1');
    expect(b.agent.credentials.get('demo-helper')?.get('K2')).toBe('value-two-2');
  });

  it('without a session configured, is not called at all and the admin is told why', async () => {
    const noSession = await startCanaryBridge('http', { AGENT_SESSION_COOKIE: '', AGENT_SESSION_TOKEN: '', LOG_LEVEL: 'warn' });
    try {
      const w = noSession.discord.world;
      const submit = noSession.discord.submitModal({ user: w.users.alice, channel: w.channels.general, customId: 'agent:credential:demo-helper', fields: { key: 'K3', value: 'value-three-3' } });
      expect(await noSession.discord.waitFor(() => submit.original?.content, 'answer')).toMatch(/dashboard session/);
      // Slack's form is not even opened: the admin is told at once.
      const ack = await noSession.to.command({ text: 'credential demo-helper', user: SW.admin, channel: SW.general });
      const answer = await noSession.slack.waitForCall('response_url', (c) => c.response.id === ack.responseUrlId);
      expect(answer.params.blocks).toMatch(/dashboard session/);
      expect(noSession.slack.callsOf('views.open')).toEqual([]);
      expect(noSession.agent.calls.filter((c) => c.endpoint === 'credentials')).toEqual([]);
    } finally {
      await noSession.close();
    }
  }, 30_000);
});

describe('forged Slack requests', () => {
  const sign = (secret: string, ts: number, body: string, version = 'v0') => `${version}=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`;
  async function send(body: string, contentType: string, headers: Record<string, string>) {
    const res = await fetch(`http://127.0.0.1:${b.bridge.httpPort}/slack/events`, { method: 'POST', headers: { 'content-type': contentType, ...headers }, body });
    await res.arrayBuffer();
    return res.status;
  }

  it('bad, missing, stale, future, replayed and tampered signatures are refused, with no effect', async () => {
    const secret = b.canaries.SLACK_SIGNING_SECRET;
    const chatBefore = b.agent.chatCalls().length;
    const dropsBefore = b.logs.lines.filter((l) => /message dropped|Slack delivery/.test(l)).length;
    const m = b.slack.userMessage({ channel: SW.general, user: SW.user, text: `<@${b.slack.identity.botUserId}> forged question` });
    const event = JSON.stringify(eventEnvelope(b.slack.state, m.mention));
    const command = formBody(slashCommand(b.slack.state, b.slack.baseUrl, { text: 'bind demo-poet all', user: SW.admin, channel: 'C0FORGED1' }));
    const now = Math.floor(Date.now() / 1000);
    const statuses: Record<string, number> = {};
    for (const [name, body, type] of [['event', event, 'application/json'], ['command', command, 'application/x-www-form-urlencoded']] as const) {
      const cases: Record<string, Record<string, string>> = {
        'wrong secret': { 'x-slack-request-timestamp': String(now), 'x-slack-signature': sign(`${secret}x`, now, body) },
        'no signature': { 'x-slack-request-timestamp': String(now) },
        'no timestamp': { 'x-slack-signature': sign(secret, now, body) },
        'stale (6 min)': { 'x-slack-request-timestamp': String(now - 360), 'x-slack-signature': sign(secret, now - 360, body) },
                'replayed a day later': { 'x-slack-request-timestamp': String(now - 86_400), 'x-slack-signature': sign(secret, now - 86_400, body) },
        'signed for another timestamp': { 'x-slack-request-timestamp': String(now), 'x-slack-signature': sign(secret, now - 1, body) },
        'wrong version': { 'x-slack-request-timestamp': String(now), 'x-slack-signature': sign(secret, now, body, 'v1') },
        'not a number': { 'x-slack-request-timestamp': 'soon', 'x-slack-signature': sign(secret, now, body) },
        tampered: { 'x-slack-request-timestamp': String(now), 'x-slack-signature': sign(secret, now, body.replace('forged', 'forgeD').replace('demo-poet', 'demo-helper')) },
      };
      for (const [label, headers] of Object.entries(cases)) statuses[`${name}: ${label}`] = await send(body, type, headers);
    }
    await sleep(500);
    figures('access-forged-slack', { requests: Object.keys(statuses).length, statuses });
    for (const [label, status] of Object.entries(statuses)) expect(status, label).toBe(401);
    // Nothing got through: no agent call, no binding, no ingress activity.
    expect(b.agent.chatCalls().length).toBe(chatBefore);
    expect(await b.bridge.bindings.get('slack', 'C0FORGED1')).toBeUndefined();
    expect(b.logs.lines.filter((l) => /message dropped|Slack delivery/.test(l)).length).toBe(dropsBefore);
    expect(b.slack.posted((c) => c.params.thread_ts === m.ts)).toEqual([]);
    // The same request correctly signed goes through (the refusals were about the signatures).
    const genuine = { 'x-slack-request-timestamp': String(now), 'x-slack-signature': sign(secret, now, event) };
    expect(await send(event, 'application/json', genuine)).toBe(200);
    await until(() => b.slack.posted((c) => c.params.thread_ts === m.ts).length > 0, 'genuine request answered');
    // Replayed verbatim inside the 5 minutes: accepted by the signature check, but no second job.
    expect(await send(event, 'application/json', genuine)).toBe(200);
    await sleep(800);
    expect(b.slack.posted((c) => c.params.thread_ts === m.ts)).toHaveLength(1);
    expect(b.agent.chatCalls().filter((c) => c.message.includes('forged question'))).toHaveLength(1);

    // Checked last, since a request that gets through has effects. Bolt refuses only timestamps
    // older than 5 minutes; Slack's own verifiers (python slack_sdk) refuse a skew either way,
    // or a request signed ahead of time stays replayable for longer than 5 minutes.
    const later = b.slack.userMessage({ channel: SW.general, user: SW.user, text: `<@${b.slack.identity.botUserId}> from the future` });
    const futureEvent = JSON.stringify(eventEnvelope(b.slack.state, later.mention));
    const futureCommand = formBody(slashCommand(b.slack.state, b.slack.baseUrl, { text: 'bind demo-poet all', user: SW.admin, channel: 'C0FUTURE1' }));
    const ahead = now + 360;
    const future = {
      event: await send(futureEvent, 'application/json', { 'x-slack-request-timestamp': String(ahead), 'x-slack-signature': sign(secret, ahead, futureEvent) }),
      command: await send(futureCommand, 'application/x-www-form-urlencoded', { 'x-slack-request-timestamp': String(ahead), 'x-slack-signature': sign(secret, ahead, futureCommand) }),
    };
    figures('access-forged-slack-future', future);
    expect.soft(future.event, 'event signed 6 minutes in the future').toBe(401);
    expect.soft(future.command, 'command signed 6 minutes in the future').toBe(401);
  }, 30_000);
});
