import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY_BLOCK, SESSION_BLOCK, SETUP_CALLBACK_ID } from '../../adapters/slack/setup-modal.js';
import { dumpKeys } from '../support/redis-cleanup.js';
import { botMention, installWorkspace, startAddToSlackBridge, until, type SlackHarness } from './harness.js';

/**
 * Issue 17, one agent-service account per workspace (AGENT_ACCOUNT_MODE=per-workspace): two
 * workspaces installed through "Add to Slack" each set their own key with `/agent setup`; each
 * one's messages, listings and credentials go to its own account, a workspace not set up is
 * told so and nothing is called, and no key rests anywhere in clear.
 */
const ALPHA = { teamId: 'TALPHA001', channel: 'CALPHA001' };
const BETA = { teamId: 'TBETA0001', channel: 'CBETA0001' };
const GAMMA = { teamId: 'TGAMMA001', channel: 'CGAMMA001' };
const KEYS = { alpha: `alpha-key-${randomUUID()}`, beta: `beta-key-${randomUUID()}` };
const SESSION = { alpha: `alpha-session-${randomUUID()}` };
const INPUT = 'input';

let h: SlackHarness;

beforeAll(async () => {
  h = await startAddToSlackBridge({
    env: { AGENT_ACCOUNT_MODE: 'per-workspace', AGENT_API_KEY: '', AGENT_SESSION_COOKIE: '' },
    agent: {
      reply: (id, m) => `${id} says: ${m}`,
      otherAccounts: [
        { apiKey: KEYS.alpha, sessionToken: SESSION.alpha, instances: [{ id: 'alpha-bot', name: 'Alpha Bot', status: 'running', type: 'chat' }] },
        { apiKey: KEYS.beta, instances: [{ id: 'beta-bot', name: 'Beta Bot', status: 'running', type: 'chat' }] },
      ],
    },
  });
  for (const team of [ALPHA, BETA, GAMMA]) expect((await installWorkspace(h, team.teamId)).done.status).toBe(200);
}, 60_000);

afterAll(async () => h?.close());

/** `/agent <text>` by a workspace owner in `team`'s channel; resolves with what the response_url got. */
async function command(team: typeof ALPHA, text: string, user = 'UOWNER001') {
  const ack = await h.to.command({ text, user, channel: team.channel, team: team.teamId });
  // These open a modal instead of answering.
  if (/^(setup|credential)\b/.test(text)) return { ...ack, text: '' };
  const call = await h.slack.waitForCall('response_url', (c) => c.response.id === ack.responseUrlId, 20_000);
  return { ...ack, text: `${call.params.text ?? ''} ${call.params.blocks ?? ''}` };
}

/** `/agent setup` then the modal submitted with `apiKey` (and a session); resolves with the modal's outcome view. */
async function setUp(team: typeof ALPHA, apiKey: string, session = '', user = 'UOWNER001') {
  const ack = await command(team, 'setup', user);
  const open = await h.slack.waitForCall('views.open', (c) => c.params.trigger_id === ack.triggerId, 20_000);
  expect(JSON.parse(open.params.view!)).toMatchObject({ callback_id: SETUP_CALLBACK_ID });
  const viewId = (open.response.view as { id: string }).id;
  const submitted = await h.to.interaction(
    h.slack.viewSubmission(viewId, user, { [API_KEY_BLOCK]: { [INPUT]: apiKey }, [SESSION_BLOCK]: { [INPUT]: session } }, team.teamId),
  );
  if ((submitted.body as { response_action?: string } | undefined)?.response_action === 'errors') return JSON.stringify(submitted.body);
  const update = await h.slack.waitForCall('views.update', (c) => c.params.view_id === viewId && !String(c.params.view).includes('Checking'), 20_000);
  return String(update.params.view);
}

/** A mention in `team`'s channel; resolves with the bot's posts in its thread once the worker is done. */
async function ask(team: typeof ALPHA, text: string) {
  const m = h.slack.userMessage({ channel: team.channel, user: 'UUSER0001', text: `${botMention(h)} ${text}`, team: team.teamId });
  await h.to.event(m.mention, { team: { teamId: team.teamId } });
  await h.to.event(m.message, { team: { teamId: team.teamId } });
  await h.slack.waitForCall('chat.postMessage', (c) => c.params.thread_ts === m.ts, 20_000);
  return h.slack.posted((c) => c.params.channel === team.channel && c.params.thread_ts === m.ts);
}

describe('AGENT_ACCOUNT_MODE=per-workspace', () => {
  it('a workspace that has not run setup is told so, and the agent is not called', async () => {
    const posts = await ask(GAMMA, 'hello before setup');
    expect(posts.map((c) => c.params.text)).toEqual([expect.stringContaining('/agent setup')]);
    expect(h.agent.chatCalls()).toHaveLength(0);
    expect((await command(GAMMA, 'instances')).text).toMatch(/no agent account yet/);
  }, 40_000);

  it('setup by a non-admin is refused, and nothing is stored', async () => {
    const ack = await h.to.command({ text: 'setup', user: 'UUSER0001', channel: ALPHA.channel, team: ALPHA.teamId });
    const refusal = await h.slack.waitForCall('response_url', (c) => c.response.id === ack.responseUrlId, 20_000);
    expect(`${refusal.params.text ?? ''} ${refusal.params.blocks ?? ''}`).toMatch(/only admins/i);
    expect(h.slack.callsOf('views.open', (c) => c.params.trigger_id === ack.triggerId)).toHaveLength(0);
    expect((await command(ALPHA, 'instances')).text).toMatch(/no agent account yet/);
  }, 40_000);

  it('a wrong key is refused by the service before anything is stored', async () => {
    const outcome = await setUp(ALPHA, `wrong-${randomUUID()}`);
    expect(outcome).toMatch(/did not accept that API key/);
    expect((await command(ALPHA, 'instances')).text).toMatch(/no agent account yet/);
  }, 40_000);

  it('each workspace lists, binds and chats with its own account', async () => {
    expect(await setUp(ALPHA, KEYS.alpha, SESSION.alpha)).toMatch(/Saved/);
    expect(await setUp(BETA, KEYS.beta)).toMatch(/Saved/);
    const alphaList = (await command(ALPHA, 'instances')).text;
    expect(alphaList).toContain('alpha-bot');
    expect(alphaList).not.toContain('beta-bot');
    expect((await command(BETA, 'bind alpha-bot')).text).toMatch(/No instance/);
    expect((await command(ALPHA, 'bind alpha-bot')).text).toMatch(/bound/i);
    expect((await command(BETA, 'bind beta-bot')).text).toMatch(/bound/i);

    const inAlpha = await ask(ALPHA, 'hello from alpha');
    const inBeta = await ask(BETA, 'hello from beta');
    expect(inAlpha.map((c) => c.params.text)).toEqual(['alpha-bot says: hello from alpha']);
    expect(inBeta.map((c) => c.params.text)).toEqual(['beta-bot says: hello from beta']);
    const keyOf = (instance: string) => h.agent.chatCalls(instance).map((c) => c.headers['x-api-key']);
    expect(keyOf('alpha-bot')).toEqual([KEYS.alpha]);
    expect(keyOf('beta-bot')).toEqual([KEYS.beta]);
  }, 60_000);

  it("a 429 from one workspace's account delays that workspace's message only, not the others'", async () => {
    h.agent.rateLimitNext(1, 30, { endpoint: 'chat', instanceId: 'alpha-bot' });
    const limited = h.slack.userMessage({ channel: ALPHA.channel, user: 'UUSER0001', text: `${botMention(h)} limited in alpha`, team: ALPHA.teamId });
    await h.to.event(limited.mention, { team: { teamId: ALPHA.teamId } });
    await h.agent.waitForCalls(1, (c) => c.endpoint === 'chat' && c.instanceId === 'alpha-bot' && c.body.includes('limited in alpha'));
    // Beta's account was not limited: its question is answered while alpha's waits out its 30 s.
    const inBeta = await ask(BETA, 'beta goes on');
    expect(inBeta.map((c) => c.params.text)).toEqual(['beta-bot says: beta goes on']);
    expect(h.slack.posted((c) => c.params.thread_ts === limited.ts)).toEqual([]);
  }, 40_000);

  it("credentials go to the workspace's own account with its own session", async () => {
    const ack = await command(ALPHA, 'credential alpha-bot');
    const open = await h.slack.waitForCall('views.open', (c) => c.params.trigger_id === ack.triggerId, 20_000);
    const viewId = (open.response.view as { id: string }).id;
    const value = `cred-${randomUUID()}`;
    await h.to.interaction(h.slack.viewSubmission(viewId, 'UOWNER001', { credential_key: { input: 'SOME_KEY' }, credential_value: { input: value } }, ALPHA.teamId));
    const sent = await h.agent.waitForCalls(1, (c) => c.endpoint === 'credentials');
    expect(sent[0]!.headers.authorization).toBe(`Bearer ${SESSION.alpha}`);
  }, 40_000);

  it('no key or session rests in clear in Redis, a log line or a call to Slack; setup is audited without them', async () => {
    const secrets = [KEYS.alpha, KEYS.beta, SESSION.alpha];
    const redis = await dumpKeys(h.prefix);
    const logs = h.logs.lines.join('\n');
    for (const s of secrets) {
      expect(redis).not.toContain(s);
      expect(logs).not.toContain(s);
      for (const call of h.slack.calls) expect(call.rawBody, `${call.method} carried a key`).not.toContain(s);
    }
    expect(logs).toContain('agent account set up');
    expect((await command(ALPHA, 'audit')).text).toMatch(/setup/);
  }, 40_000);

  it('an uninstall deletes the workspace\'s account: reinstalled, it is told to run setup, and nothing is billed to the old key', async () => {
    const accountKey = `${h.prefix}:chat:account:slack:${BETA.teamId}`;
    expect((await dumpKeys(h.prefix)).includes(accountKey)).toBe(true);
    h.slack.oauth!.uninstall(BETA.teamId);
    expect((await h.to.event({ type: 'app_uninstalled' }, { team: { teamId: BETA.teamId } })).status).toBe(200);
    await until(() => h.logs.lines.some((l) => l.includes('its data is gone') && l.includes(BETA.teamId)), 'the uninstall finished');
    expect((await dumpKeys(h.prefix)).includes(accountKey)).toBe(false);
    // Reinstalled (by anyone): no account until its admin runs setup again.
    expect((await installWorkspace(h, BETA.teamId)).done.status).toBe(200);
    const billedBefore = h.agent.chatCalls().filter((c) => c.headers['x-api-key'] === KEYS.beta).length;
    const posts = await ask(BETA, 'hello after reinstall');
    expect(posts.map((c) => c.params.text)).toEqual([expect.stringContaining('/agent setup')]);
    expect(h.agent.chatCalls().filter((c) => c.headers['x-api-key'] === KEYS.beta)).toHaveLength(billedBefore);
    // Alpha's account is untouched.
    expect((await ask(ALPHA, 'alpha still set up')).map((c) => c.params.text)).toEqual(['alpha-bot says: alpha still set up']);
  }, 60_000);
});
