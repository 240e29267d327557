import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuditLog } from '../../src/audit/audit-log.js';
import { ASK_AGENT_CALLBACK_ID } from '../../adapters/slack/ask-shortcut.js';
import { botMention, installWorkspace, startAddToSlackBridge, until, type SlackHarness } from './harness.js';
import { until as untilAsync } from '../reliability/support/guards.js';

/**
 * Issue 17, "Add to Slack": two workspaces install the app through Bolt's OAuth v2 flow
 * against the emulator (strict code exchange), each chats with the bot using its own token,
 * and removing the app from one takes its installation, bindings and queued work with it.
 */
const ALPHA = { teamId: 'TALPHA001', channel: 'CALPHA001' };
const BETA = { teamId: 'TBETA0001', channel: 'CBETA0001' };
/** A workspace of an Enterprise Grid org where the app was installed org-wide. */
const ORG = { teamId: 'TORGA0001', channel: 'CORGA0001', enterpriseId: 'E0ORG0001' };
/** Another workspace of the same org. */
const ORG_B = { teamId: 'TORGB0001', channel: 'CORGB0001', enterpriseId: 'E0ORG0001' };

let h: SlackHarness;
let redis: Redis;
let base: string;

beforeAll(async () => {
  h = await startAddToSlackBridge({
    // Token rotation on: every token expires within the hour, so each use refreshes it first.
    rotateAfterSeconds: 3_600,
    env: { BINDINGS: `slack:${ALPHA.channel}=demo-helper,slack:${BETA.channel}=demo-helper,slack:${ORG.channel}=demo-helper,slack:${ORG_B.channel}=demo-helper` },
    agent: { reply: (_id, m) => `echo: ${m}` },
  });
  redis = new Redis({ host: '127.0.0.1', port: 6379, lazyConnect: false });
  base = `http://127.0.0.1:${h.bridge.httpPort}`;
}, 60_000);

afterAll(async () => {
  redis?.disconnect();
  await h?.close();
});

/** The browser's walk (`installWorkspace`), with the install page's redirect checked. */
async function install(teamId: string, org?: { enterpriseId: string }) {
  const { start, authorizeUrl, done } = await installWorkspace(h, teamId, org);
  expect(start.status).toBe(302);
  return { authorizeUrl, done, body: await done.text() };
}

/** Someone in `team` mentions the bot in its channel. */
async function post(team: { teamId: string; channel: string; enterpriseId?: string }, text: string) {
  const m = h.slack.userMessage({ channel: team.channel, user: 'UUSER0001', text: `${botMention(h)} ${text}`, team: team.teamId });
  const to = { teamId: team.teamId, ...(team.enterpriseId ? { enterpriseId: team.enterpriseId, isEnterpriseInstall: true } : {}) };
  await h.to.event(m.mention, { team: to });
  await h.to.event(m.message, { team: to });
  return m;
}

/** Mentions the bot and waits for the worker to finish: the bot's posts in that thread. */
async function ask(team: { teamId: string; channel: string; enterpriseId?: string }, text: string) {
  const m = await post(team, text);
  await h.slack.waitForCall('reactions.remove', (c) => c.params.timestamp === m.ts, 20_000);
  return h.slack.posted((c) => c.params.channel === team.channel && c.params.thread_ts === m.ts);
}

describe('Slack for many workspaces ("Add to Slack")', () => {
  it('installs two workspaces through OAuth v2; the tokens rest encrypted in Redis', async () => {
    const a = await install(ALPHA.teamId);
    expect(new URL(a.authorizeUrl).pathname).toBe('/oauth/v2/authorize');
    expect(new URL(a.authorizeUrl).searchParams.get('scope')).toContain('chat:write');
    expect(a.done.status).toBe(200);
    const b = await install(BETA.teamId);
    expect(b.done.status).toBe(200);

    const exchanges = h.slack.callsOf('oauth.v2.access');
    expect(exchanges.map((c) => c.response.ok)).toEqual([true, true]);
    const stored = await redis.get(`${h.prefix}:slack:installation:team:${ALPHA.teamId}`);
    expect(stored).toMatch(/^v1\./);
    const tokens = [...h.slack.oauth!.installs.keys()];
    expect(tokens).toHaveLength(2);
    for (const t of tokens) expect(stored).not.toContain(t);
    // Nothing else in Redis holds a token either.
    const keys = await redis.keys(`${h.prefix}*`);
    const values = await Promise.all(keys.map((k) => redis.type(k).then((type) => (type === 'string' ? redis.get(k) : ''))));
    for (const t of tokens) expect(values.join('\n')).not.toContain(t);
  }, 30_000);

  it('a replayed OAuth redirect (same code, no state cookie) installs nothing', async () => {
    const start = await fetch(`${base}/slack/install`, { redirect: 'manual' });
    const back = new URL(h.slack.oauth!.approve(start.headers.get('location')!, { teamId: 'TEVIL0001' }));
    const res = await fetch(`${base}/slack/oauth_redirect${back.search}`, { redirect: 'manual' });
    expect(res.status).not.toBe(200);
    expect(await redis.exists(`${h.prefix}:slack:installation:team:TEVIL0001`)).toBe(0);
  });

  it('a bare or replayed OAuth redirect is logged as a warning, not an error (anyone can open that URL)', async () => {
    const errorsBefore = h.logs.matching(/slack_oauth|MissingCode|InvalidState|state/i).filter((l) => Number(l.level) >= 50).length;
    const bare = await fetch(`${base}/slack/oauth_redirect`, { redirect: 'manual' });
    expect(bare.status).not.toBe(200);
    const stale = await fetch(`${base}/slack/oauth_redirect?code=made-up&state=made-up`, { redirect: 'manual' });
    expect(stale.status).not.toBe(200);
    const lines = h.logs.matching(/Missing|Invalid|state|code/i).filter((l) => l.sdk !== undefined);
    expect(lines.some((l) => Number(l.level) === 40)).toBe(true);
    expect(h.logs.matching(/slack_oauth|MissingCode|InvalidState|state/i).filter((l) => Number(l.level) >= 50).length).toBe(errorsBefore);
  });

  it('each workspace chats with the bot, answered with its own installation token', async () => {
    const inAlpha = await ask(ALPHA, 'hello from alpha');
    const inBeta = await ask(BETA, 'hello from beta');
    expect(inAlpha.map((c) => c.params.text)).toEqual(['echo: hello from alpha']);
    expect(inBeta.map((c) => c.params.text)).toEqual(['echo: hello from beta']);
    expect(inAlpha.map((c) => c.team)).toEqual([ALPHA.teamId]);
    expect(inBeta.map((c) => c.team)).toEqual([BETA.teamId]);
    // Every call the bridge made was with an installation's token, and to that installation's own channel.
    for (const c of h.slack.calls.filter((x) => x.params.channel === ALPHA.channel)) expect(c.team).toBe(ALPHA.teamId);
    for (const c of h.slack.calls.filter((x) => x.params.channel === BETA.channel)) expect(c.team).toBe(BETA.teamId);
    // No installation token (first or rotated) in any log line.
    const logs = h.logs.lines.join('\n');
    for (const t of h.slack.oauth!.installs.keys()) expect(logs).not.toContain(t);
    // Rotating tokens were refreshed by Bolt's installer (and the refreshed installation saved sealed).
    expect(h.slack.callsOf('oauth.v2.access', (c) => c.params.grant_type === 'refresh_token' && c.response.ok === true).length).toBeGreaterThan(0);
  }, 40_000);

  it('"Ask the agent" on a message in one workspace is answered there, with that installation\'s token', async () => {
    const m = h.slack.userMessage({ channel: BETA.channel, user: 'UUSER0001', text: 'what does this mean?', team: BETA.teamId });
    const payload = h.slack.messageShortcut({ user: 'UUSER0001', channel: BETA.channel, messageTs: m.ts, callbackId: ASK_AGENT_CALLBACK_ID }) as Record<string, unknown>;
    const delivery = await h.to.interaction({ ...payload, team: { id: BETA.teamId, domain: 'beta' }, user: { id: 'UUSER0001', name: 'uuser', team_id: BETA.teamId } });
    expect(delivery.status).toBe(200);
    await h.slack.waitForCall('reactions.remove', (c) => c.params.timestamp === m.ts, 20_000);
    const posts = h.slack.posted((c) => c.params.channel === BETA.channel && c.params.thread_ts === m.ts);
    expect(posts.map((c) => c.params.text)).toEqual([expect.stringContaining('echo:')]);
    expect(posts.map((c) => c.team)).toEqual([BETA.teamId]);
  }, 40_000);

  it("a text file shared in one workspace is read with that workspace's own installation token", async () => {
    const file = h.slack.files.add({ name: 'notes.txt', mimetype: 'text/plain', content: 'beta notes: ship friday' }, { team: BETA.teamId });
    const m = h.slack.userMessage({ channel: BETA.channel, user: 'UUSER0001', text: `${botMention(h)} read this`, team: BETA.teamId, files: [file] });
    await h.to.event(m.mention, { team: { teamId: BETA.teamId } });
    await h.to.event(m.message, { team: { teamId: BETA.teamId } });
    await h.slack.waitForCall('reactions.remove', (c) => c.params.timestamp === m.ts, 20_000);
    const sent = h.agent.chatCalls().find((c) => c.message.includes('read this'));
    expect(sent?.message).toContain('beta notes: ship friday');
    // One download, with a token of beta's installation (the file host refuses any other).
    const download = h.slack.files.downloads.filter((d) => d.path.includes(`/files-pri/${BETA.teamId}-`));
    expect(download).toHaveLength(1);
    const token = download[0]!.authorization!.replace('Bearer ', '');
    expect(h.slack.oauth!.installFor(token)?.teamId).toBe(BETA.teamId);
    expect(h.logs.text).not.toContain('beta notes: ship friday');
  }, 40_000);

  it('a workspace owner is an /agent admin there: users.info goes out with that installation\'s token', async () => {
    const run = async (user: string) => {
      const ack = await h.to.command({ text: 'status', user, channel: BETA.channel, team: BETA.teamId });
      const call = await h.slack.waitForCall('response_url', (c) => c.response.id === ack.responseUrlId);
      return call.params.text ?? call.params.blocks ?? '';
    };
    expect(await run('UOWNER001')).not.toMatch(/only admins/i);
    expect(await run('UUSER0001')).toMatch(/only admins/i);
    const lookups = h.slack.callsOf('users.info', (c) => c.params.user === 'UOWNER001');
    expect(lookups.map((c) => c.team)).toEqual([BETA.teamId]);
  }, 40_000);

  it('an Enterprise Grid org-wide install is kept under the enterprise and answers in the org\'s workspaces', async () => {
    const { done } = await install(ORG.teamId, { enterpriseId: ORG.enterpriseId });
    expect(done.status).toBe(200);
    expect(await redis.exists(`${h.prefix}:slack:installation:enterprise:${ORG.enterpriseId}`)).toBe(1);
    expect(await redis.exists(`${h.prefix}:slack:installation:team:${ORG.teamId}`)).toBe(0);
    const posts = await ask(ORG, 'hello from the org');
    expect(posts.map((c) => c.params.text)).toEqual(['echo: hello from the org']);
    expect(posts.map((c) => c.team)).toEqual([ORG.enterpriseId]);
  }, 40_000);

  it('team_access_revoked removes only the lost workspaces of an org-wide install; the org answers on', async () => {
    // The org install of the test before; each workspace of the org is used once (its places recorded).
    expect((await ask(ORG_B, 'hello from b')).map((c) => c.params.text)).toEqual(['echo: hello from b']);
    const audit = createAuditLog({ redis, prefix: `${h.prefix}:chat` });
    const delivery = await h.to.event({ type: 'team_access_revoked', team_ids: [ORG_B.teamId] }, { team: { teamId: ORG.teamId, enterpriseId: ORG.enterpriseId, isEnterpriseInstall: true } });
    expect(delivery.status).toBe(200);
    await until(() => h.logs.lines.some((l) => l.includes('removed from some workspaces')), 'the revocation handled');
    expect(await h.bridge.bindings.get('slack', ORG_B.channel)).toBeUndefined();
    expect(await h.bridge.bindings.get('slack', ORG.channel)).toBeDefined();
    expect(await redis.exists(`${h.prefix}:slack:installation:enterprise:${ORG.enterpriseId}`)).toBe(1);
    expect((await audit.recent(10, { platform: 'slack', workspaceId: ORG_B.teamId })).map((e) => e.action)).toEqual(['uninstall']);
    expect((await ask(ORG, 'still here?')).map((c) => c.params.text)).toEqual(['echo: still here?']);
  }, 40_000);

  /** Opens an assistant thread in `team`'s DM `dm` (context: its channel), asks once, waits for the answer. */
  async function assistantExchange(team: { teamId: string; channel: string }, dm: string) {
    const started = h.slack.assistantThreadStarted({ user: 'UUSER0001', dm, contextChannel: team.channel });
    await h.to.event(started.event, { team: { teamId: team.teamId } });
    await h.slack.waitForCall('assistant.threads.setSuggestedPrompts', (c) => c.params.thread_ts === started.threadTs);
    await h.to.event(h.slack.assistantMessage({ user: 'UUSER0001', dm, threadTs: started.threadTs, text: `private words in ${dm}` }).message, { team: { teamId: team.teamId } });
    await until(() => h.slack.posted((c) => c.params.channel === dm && /private words/.test(c.params.text ?? '')).length > 0, `the answer in ${dm}`);
    return started.threadTs;
  }

  it('app_uninstalled in one workspace removes its installation, bindings and queued work, audited; the other goes on', async () => {
    const audit = createAuditLog({ redis, prefix: `${h.prefix}:chat` });
    // An assistant thread in each workspace: its record holds what the user said to the agent.
    const alphaThread = await assistantExchange(ALPHA, 'D0ALPHA01');
    const betaThread = await assistantExchange(BETA, 'D0BETA001');
    const transcript = (dm: string, ts: string) => redis.lrange(`${h.prefix}:chat:slack:assistant-turns:${dm}:${ts}`, 0, -1);
    expect((await transcript('D0ALPHA01', alphaThread)).join()).toContain('private words in D0ALPHA01');
    // Work waits in the queue for both workspaces (the workers are paused).
    await h.bridge.queue.queue.pause();
    const waitingA = await post(ALPHA, 'queued in alpha');
    const waitingB = await post(BETA, 'queued in beta');
    const waiting = async () => (await h.bridge.queue.queue.getJobs(['waiting', 'prioritized', 'delayed'])).map((j) => j.data.conversationId);
    await untilAsync(async () => (await waiting()).length === 2, 'both messages queued');
    h.slack.oauth!.uninstall(ALPHA.teamId);
    const delivery = await h.to.event({ type: 'app_uninstalled' }, { team: { teamId: ALPHA.teamId } });
    expect(delivery.status).toBe(200);
    await until(() => h.logs.lines.some((l) => l.includes('its data is gone')), 'the uninstall finished');
    expect(await redis.exists(`${h.prefix}:slack:installation:team:${ALPHA.teamId}`)).toBe(0);
    expect(await h.bridge.bindings.get('slack', ALPHA.channel)).toBeUndefined();
    expect(await h.bridge.bindings.get('slack', BETA.channel)).toBeDefined();
    const entries = await audit.recent(10, { platform: 'slack', workspaceId: ALPHA.teamId });
    expect(entries.map((e) => e.action)).toEqual(['uninstall']);
    // Alpha's assistant thread and its transcript are gone (Slack asks apps to delete data on uninstall); beta's stay.
    expect(await redis.keys(`${h.prefix}:chat:slack:assistant*D0ALPHA01*`)).toEqual([]);
    expect((await transcript('D0BETA001', betaThread)).join()).toContain('private words in D0BETA001');
    // Each workspace's audit holds only its own: beta's has the refused /agent attempt, and no uninstall.
    expect((await audit.recent(10, { platform: 'slack', workspaceId: BETA.teamId })).map((e) => e.action)).toEqual(['refused']);
    // Alpha's queued message is gone; beta's is still there and is answered once work resumes.
    expect(await waiting()).toEqual([expect.stringMatching(new RegExp(`^slack:${BETA.teamId}:`))]);
    // Its message is gone from the mailbox too (the stranded sweep would queue it again); beta's stays.
    expect(await redis.keys(`${h.prefix}:chat:conv:slack:${ALPHA.teamId}:*`)).toEqual([]);
    expect((await redis.zrange(`${h.prefix}:chat:stranded`, '0', '-1')).filter((id) => id.startsWith(`slack:${ALPHA.teamId}:`))).toEqual([]);
    expect(await redis.keys(`${h.prefix}:chat:conv:slack:${BETA.teamId}:*`)).not.toEqual([]);
    await h.bridge.queue.queue.resume();
    await h.slack.waitForCall('reactions.remove', (c) => c.params.timestamp === waitingB.ts, 20_000);
    expect(h.agent.chatCalls().filter((c) => c.message.includes('queued in alpha'))).toEqual([]);
    expect(h.slack.thread(ALPHA.channel, waitingA.ts).filter((x) => x.user === h.slack.identity.botUserId)).toEqual([]);
    expect((await ask(BETA, 'still there?')).map((c) => c.params.text)).toEqual(['echo: still there?']);
  }, 40_000);
});
