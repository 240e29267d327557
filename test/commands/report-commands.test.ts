import { afterAll, describe, expect, it } from 'vitest';
import { AgentApiError } from '../../src/core/errors.js';
import { cleanup, testRedis } from '../support/redis-helpers.js';
import { caller, setup, text } from './setup.js';

const { redis, prefix } = testRedis();
afterAll(() => cleanup(redis, prefix));

describe('status', () => {
  it('shows the binding, the agent service, the queue and the usage', async () => {
    const t = setup(redis, prefix);
    await t.commands.bind(caller, 'inst_a', 'all');
    await t.commands.set(caller, 'quota', 'channel-per-minute 20');
    await t.quota.consume({ platform: 'slack', channelId: 'C1', userId: 'U1' });
    await t.quota.consume({ platform: 'slack', channelId: 'C1', userId: 'U2' });
    const r = await t.commands.status(caller);
    expect(r.ok).toBe(true);
    const s = text(r);
    expect(s).toContain('Bound to `inst_a` (by `UADMIN`).');
    expect(s).toContain('Mode `all`, error policy `reply`, thread context `off`.');
    expect(s).toContain('Agent service: answering (2 instances). Instance status: `running`.');
    expect(s).toContain('Queue: 3 waiting, 1 active, 2 delayed, 4 failed.');
    expect(s).toContain('Messages in this channel: 2 of 20 this minute, 2 of 100 this day.');
    expect(s).toContain('Per-user limits: 5 per minute, unlimited per day.');
  });

  it('says when the agent service does not answer, or answers an error', async () => {
    const t = setup(redis, prefix);
    t.agentApi.listHangs = true;
    const started = Date.now();
    const r = await t.commands.status({ ...caller, channelId: 'CDEF' });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(text(r)).toContain("Agent service: not answering: the agent service didn't answer in time.");
    expect(text(r)).toContain('Bound to `inst_a` (BINDINGS default).');

    t.agentApi.listHangs = false;
    t.agentApi.listError = new AgentApiError('unauthorized', 'the agent service answered 401', { status: 401 });
    expect(text(await t.commands.status(caller))).toContain('did not accept our credentials');
  });

  it('still answers when the queue figures fail, and when the channel is not bound', async () => {
    const t = setup(redis, prefix);
    t.stats.value = new Error('redis down');
    const r = await t.commands.status(caller);
    expect(r.ok).toBe(true);
    expect(text(r)).toContain('Queue: figures unavailable right now.');
    expect(text(r)).toContain('Not bound');
    expect(text(r)).toContain('0 of 10 this minute');
  });

  it('notices when the bound instance is gone', async () => {
    const t = setup(redis, prefix);
    await t.commands.bind(caller, 'inst_b');
    t.agentApi.instances = t.agentApi.instances.filter((i) => i.id !== 'inst_b');
    expect(text(await t.commands.status(caller))).toContain('Instance `inst_b` is not in the list any more.');
  });

  it('does not show counts when the channel has no limits', async () => {
    const t = setup(redis, prefix);
    await t.commands.bind(caller, 'inst_a');
    await t.commands.set(caller, 'quota', 'channel-per-minute 0');
    await t.commands.set(caller, 'quota', 'channel-per-day 0');
    const s = text(await t.commands.status(caller));
    expect(s).toContain('Messages in this channel: no channel limits.');
    await t.commands.set(caller, 'quota', 'channel-per-day default');
    expect(text(await t.commands.status(caller))).toContain('0 this minute (no limit), 0 of 100 this day');
  });
});

describe('why', () => {
  it('explains the last unanswered messages in plain words, with reference IDs', async () => {
    const now = 1_700_000_000_000;
    const t = setup(redis, prefix, { now: () => now });
    await t.commands.bind(caller, 'inst_a');
    await t.dropLog.record('slack', 'C1', { messageId: 'm1', userId: 'U1', reason: 'not_addressed', at: now - 3 * 60_000 });
    await t.dropLog.record('slack', 'C1', { messageId: 'm2', userId: 'U2', reason: 'agent_refused', at: now - 10_000, ref: 'ab12cd34' });
    await t.dropLog.record('slack', 'C9', { messageId: 'm3', userId: 'U3', reason: 'bot', at: now });
    const r = await t.commands.why(caller);
    expect(r.ok).toBe(true);
    expect(r.lines).toEqual([
      'The last 2 messages here that got no answer, newest first:',
      '• just now, from `U2`: the agent service refused the message (reference `ab12cd34`).',
      "• 3 minutes ago, from `U1`: the bot wasn't addressed (mention it, reply to it, or bind the channel with mode `all`).",
    ]);
  });

  it('says when nothing was recorded, and when the channel is not bound', async () => {
    const t = setup(redis, prefix);
    const r = await t.commands.why(caller);
    expect(r.lines[0]).toContain('not bound');
    expect(r.lines[1]).toContain('No unanswered messages');
  });
});

describe('audit', () => {
  it('shows recent admin actions of this workspace, newest first, with key names only', async () => {
    const t = setup(redis, prefix, { now: () => Date.UTC(2025, 0, 31, 14, 5) });
    // Refused attempts live in a stream of their own, merged by stream ID (Redis's millisecond):
    // a few ms apart, so "newest first" has one answer (within one ms the order is a tie).
    const apart = () => new Promise((r) => setTimeout(r, 3));
    await t.commands.bind(caller, 'inst_a');
    await apart();
    await t.commands.credential(caller, 'inst_a', 'OPENAI_API_KEY', 'sk-live-supersecret');
    await apart();
    await t.commands.refuse({ ...caller, userId: 'UNOBODY', userName: undefined }, 'bind');
    await t.commands.bind({ ...caller, workspaceId: 'T2' }, 'inst_a');
    const r = await t.commands.audit(caller);
    expect(r.ok).toBe(true);
    expect(r.table?.columns).toEqual(['When', 'Who', 'Action', 'Channel', 'Instance', 'Key', 'Outcome', 'Detail']);
    expect(r.table?.rows).toEqual([
      ['2025-01-31 14:05 UTC', 'UNOBODY', 'refused', 'C1', '', '', 'refused', 'bind'],
      ['2025-01-31 14:05 UTC', 'Ada (UADMIN)', 'credential', 'C1', 'inst_a', 'OPENAI_API_KEY', 'ok', ''],
      ['2025-01-31 14:05 UTC', 'Ada (UADMIN)', 'bind', 'C1', 'inst_a', '', 'ok', 'mode=mention'],
    ]);
    expect(text(r)).not.toContain('sk-live-supersecret');
  });

  it('says when there is nothing yet', async () => {
    const t = setup(redis, prefix);
    expect((await t.commands.audit(caller)).lines).toEqual(['No admin actions have been recorded here yet.']);
  });
});
