import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEEDBACK_ACTION_ID } from '../../adapters/slack/feedback-blocks.js';
import { createAuditLog } from '../../src/audit/audit-log.js';
import { encodeFeedbackValue } from '../../src/feedback/index.js';
import { botMention, installWorkspace, startAddToSlackBridge, until, type SlackHarness } from './harness.js';

/**
 * Issue 17, "Add to Slack": two workspaces installed through OAuth against the emulator cannot
 * see or change each other's bindings (channel and DM), failures (`/agent why`) or feedback;
 * `tokens_revoked` removes one installation (audited) and leaves the other's DM binding.
 */
const ALPHA = { teamId: 'TALPHA001', channel: 'CALPHA001', dm: 'DALPHA001' };
const BETA = { teamId: 'TBETA0001', channel: 'CBETA0001', dm: 'DBETA0001' };
type Team = typeof ALPHA;
const OWNER = 'UOWNER001';
const USER = 'UUSER0001';

let h: SlackHarness;
let redis: Redis;

beforeAll(async () => {
  h = await startAddToSlackBridge({
    // The deployment-wide DM default every workspace starts from.
    env: { BINDINGS: `slack:${ALPHA.channel}=demo-helper,slack:${BETA.channel}=demo-helper,slack:dm=demo-helper` },
    agent: { reply: (id, m) => `${id} says: ${m}` },
  });
  redis = new Redis({ host: '127.0.0.1', port: 6379 });
  for (const team of [ALPHA, BETA]) expect((await installWorkspace(h, team.teamId)).done.status).toBe(200);
}, 60_000);

afterAll(async () => {
  redis?.disconnect();
  await h?.close();
});

/** `/agent <text>` by the workspace's owner, in its channel or (`where: 'dm'`) its DM; resolves with the answer's text. */
async function command(team: Team, text: string, where: 'channel' | 'dm' = 'channel') {
  const ack = await h.to.command({ text, user: OWNER, channel: where === 'dm' ? team.dm : team.channel, team: team.teamId });
  const call = await h.slack.waitForCall('response_url', (c) => c.response.id === ack.responseUrlId, 20_000);
  return `${call.params.text ?? ''} ${call.params.blocks ?? ''}`;
}

/** A DM to the bot in `team`; resolves with the text the bot posted back in that DM. */
async function dm(team: Team, text: string) {
  const before = Date.now();
  const m = h.slack.userMessage({ channel: team.dm, user: USER, text, team: team.teamId });
  await h.to.event(m.message, { team: { teamId: team.teamId } });
  const post = await h.slack.waitForCall(
    'chat.postMessage',
    (c) => c.response.ok === true && c.params.channel === team.dm && c.params.thread_ts === undefined && (c.params.text ?? '').length > 0 && c.at >= before,
    20_000,
  );
  return { text: post.params.text ?? '', team: post.team };
}

/** A mention in `team`'s channel; resolves with the bot's first post in its thread. */
async function mention(team: Team, text: string) {
  const m = h.slack.userMessage({ channel: team.channel, user: USER, text: `${botMention(h)} ${text}`, team: team.teamId });
  await h.to.event(m.mention, { team: { teamId: team.teamId } });
  await h.to.event(m.message, { team: { teamId: team.teamId } });
  const post = await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.thread_ts === m.ts, 20_000);
  return post.params.text ?? '';
}

describe('two installed workspaces are kept apart', () => {
  it("a DM bind in one workspace changes that workspace's DMs only; the shared BINDINGS `dm` default stays", async () => {
    expect(await command(ALPHA, 'bind demo-poet', 'dm')).toMatch(/bound/i);
    expect(await dm(ALPHA, 'hi from alpha')).toEqual({ text: 'demo-poet says: hi from alpha', team: ALPHA.teamId });
    expect(await dm(BETA, 'hi from beta')).toEqual({ text: 'demo-helper says: hi from beta', team: BETA.teamId });
    // Beta's admin sees beta's DM binding (the deployment default), not alpha's.
    const betaStatus = await command(BETA, 'status', 'dm');
    expect(betaStatus).toContain('demo-helper');
    expect(betaStatus).not.toContain('demo-poet');
    expect(await command(ALPHA, 'status', 'dm')).toContain('demo-poet');
    expect(await redis.hget(`${h.prefix}:chat:bindings`, 'slack:dm')).toBeNull();
  }, 60_000);

  it("an unbind in one workspace's DM leaves the other's, and `/agent why` shows each its own failures", async () => {
    expect(await command(BETA, 'unbind', 'dm')).toMatch(/unbound|removed|no longer/i);
    expect((await dm(BETA, 'anyone there?')).text).toMatch(/connected to an agent/);
    expect((await dm(ALPHA, 'still me')).text).toBe('demo-poet says: still me');
    expect(h.agent.chatCalls().some((c) => c.message.includes('anyone there?'))).toBe(false);

    const betaWhy = await command(BETA, 'why', 'dm');
    expect(betaWhy).toContain('not bound to an agent instance');
    expect(betaWhy).toContain(USER);
    const alphaWhy = await command(ALPHA, 'why', 'dm');
    expect(alphaWhy).toContain('No unanswered messages');
  }, 60_000);

  it("channel bindings: each workspace sees and changes only its own channel's", async () => {
    expect(await command(BETA, 'bind demo-poet')).toMatch(/bound/i);
    expect(await command(ALPHA, 'status')).toContain('demo-helper');
    expect(await command(BETA, 'status')).toContain('demo-poet');
    expect(await command(ALPHA, 'unbind')).toMatch(/unbound|removed|no longer/i);
    expect(await mention(ALPHA, 'channel question')).toMatch(/connected to an agent/);
    expect(await mention(BETA, 'channel question')).toBe('demo-poet says: channel question');
    expect(await command(ALPHA, 'why')).toContain('not bound to an agent instance');
    expect(await command(BETA, 'why')).toContain('No unanswered messages');
  }, 60_000);

  it('`/agent feedback` shows each workspace the votes cast there only, even on a shared instance', async () => {
    const click = async (team: Team, agentMessageId: string, rating: 'positive' | 'negative') => {
      const value = encodeFeedbackValue({ rating, instanceId: 'demo-helper', agentMessageId })!;
      const messageTs = `1700000${Math.floor(Math.random() * 1e3)}.000100`;
      const payload = h.slack.feedbackClick({ user: USER, channel: team.channel, messageTs, actionId: FEEDBACK_ACTION_ID, value });
      await h.to.interaction({ ...payload, team: { id: team.teamId, domain: team.teamId.toLowerCase() }, user: { id: USER, name: 'uuser', team_id: team.teamId } });
      await h.slack.waitForCall('chat.postEphemeral', (c) => c.params.channel === team.channel && c.params.text === 'Thanks for the feedback!' && c.team === team.teamId, 20_000);
    };
    await click(ALPHA, 'msg_alpha_bad', 'negative');
    await click(BETA, 'msg_beta_bad', 'negative');
    await click(BETA, 'msg_beta_good', 'positive');

    const alpha = await command(ALPHA, 'feedback');
    expect(alpha).toMatch(/demo-helper: 👍 0 · 👎 1/);
    expect(alpha).toContain(`msg_alpha_bad in ${ALPHA.channel}`);
    expect(alpha).not.toContain(BETA.channel);
    const beta = await command(BETA, 'feedback');
    expect(beta).toMatch(/demo-helper: 👍 1 · 👎 1/);
    expect(beta).toContain(`msg_beta_bad in ${BETA.channel}`);
    expect(beta).not.toContain(ALPHA.channel);
  }, 60_000);

  it('an assistant thread with no context-channel binding is answered by its own workspace\'s DM binding', async () => {
    // Beta's DM is unbound (above): bind it again to the default instance for this one.
    expect(await command(BETA, 'bind demo-helper', 'dm')).toMatch(/bound/i);
    for (const [team, instance] of [
      [ALPHA, 'demo-poet'],
      [BETA, 'demo-helper'],
    ] as const) {
      const started = h.slack.assistantThreadStarted({ user: USER, dm: team.dm });
      await h.to.event(started.event, { team: { teamId: team.teamId } });
      await h.slack.waitForCall('assistant.threads.setSuggestedPrompts', (c) => c.params.thread_ts === started.threadTs, 20_000);
      const m = h.slack.assistantMessage({ user: USER, dm: team.dm, threadTs: started.threadTs, text: `assistant in ${team.teamId}` });
      await h.to.event({ ...m.message, team: team.teamId }, { team: { teamId: team.teamId } });
      const reply = await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.thread_ts === started.threadTs, 20_000);
      expect(reply.params.text).toMatch(new RegExp(`^${instance} says: [^]*assistant in ${team.teamId}$`));
      expect(reply.team).toBe(team.teamId);
    }
  }, 60_000);

  it('tokens_revoked (of the bot) removes that installation and its DM binding, audited; the other keeps its own', async () => {
    const audit = createAuditLog({ redis, prefix: `${h.prefix}:chat` });
    // A revoked user token leaves the installation working.
    await h.to.event({ type: 'tokens_revoked', tokens: { oauth: [USER] } }, { team: { teamId: BETA.teamId } });
    expect(await command(BETA, 'status', 'dm')).toContain('demo-helper');
    expect(await redis.exists(`${h.prefix}:slack:installation:team:${BETA.teamId}`)).toBe(1);

    h.slack.oauth!.uninstall(BETA.teamId);
    const delivery = await h.to.event({ type: 'tokens_revoked', tokens: { bot: [h.slack.identity.botUserId] } }, { team: { teamId: BETA.teamId } });
    expect(delivery.status).toBe(200);
    await until(() => h.logs.lines.some((l) => l.includes('its data is gone')), 'the removal finished');
    expect(await redis.exists(`${h.prefix}:slack:installation:team:${BETA.teamId}`)).toBe(0);
    expect(await h.bridge.bindings.get('slack', `dm:${BETA.teamId}`)).toBeUndefined();
    expect(await h.bridge.bindings.get('slack', BETA.channel)).toBeUndefined();
    // Alpha's DM binding and the shared default are untouched.
    expect((await h.bridge.bindings.get('slack', `dm:${ALPHA.teamId}`))?.instanceId).toBe('demo-poet');
    expect((await h.bridge.bindings.get('slack', 'dm'))?.instanceId).toBe('demo-helper');
    expect(await redis.exists(`${h.prefix}:slack:installation:team:${ALPHA.teamId}`)).toBe(1);

    const entries = await audit.recent(10, { platform: 'slack', workspaceId: BETA.teamId });
    expect(entries.filter((e) => e.action === 'uninstall').map((e) => e.detail)).toEqual([expect.stringMatching(/^tokens_revoked: \d+ binding\(s\)/)]);
    expect((await audit.recent(20, { platform: 'slack', workspaceId: ALPHA.teamId })).some((e) => e.action === 'uninstall')).toBe(false);
    expect((await dm(ALPHA, 'after beta left')).text).toBe('demo-poet says: after beta left');
  }, 60_000);
});
