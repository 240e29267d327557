import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { createFeedbackStore, decodeFeedbackValue, encodeFeedbackValue, formatFeedbackSummary } from '../../src/feedback/index.js';
import { cleanup, keysUnder, testRedis } from '../support/redis-helpers.js';

const { redis, prefix } = testRedis();
afterAll(() => cleanup(redis, prefix));

const base = { platform: 'slack' as const, workspaceId: 'T1', channelId: 'C1' };

describe('feedback store', () => {
  it('keeps one vote per user per reply; changing it replaces it and counts the new rating', async () => {
    const registry = new Registry();
    const store = createFeedbackStore({ redis, prefix: `${prefix}:one`, registry });
    expect(await store.record({ ...base, instanceId: 'inst_a', agentMessageId: 'msg_1', userId: 'U1', rating: 'positive' })).toEqual({ changed: true });
    expect(await store.record({ ...base, instanceId: 'inst_a', agentMessageId: 'msg_1', userId: 'U1', rating: 'positive' })).toEqual({ changed: false, previous: 'positive' });
    expect(await store.record({ ...base, instanceId: 'inst_a', agentMessageId: 'msg_1', userId: 'U1', rating: 'negative', link: 'https://x/p1' })).toEqual({
      changed: true,
      previous: 'positive',
    });
    await store.record({ ...base, instanceId: 'inst_a', agentMessageId: 'msg_1', userId: 'U2', rating: 'positive' });
    await store.record({ ...base, instanceId: 'inst_b', agentMessageId: 'msg_9', userId: 'U1', rating: 'positive' });

    const rows = await store.summary();
    expect(rows).toEqual([
      { instanceId: 'inst_a', positive: 1, negative: 1, latestNegative: [expect.objectContaining({ agentMessageId: 'msg_1', link: 'https://x/p1', channelId: 'C1' })] },
      { instanceId: 'inst_b', positive: 1, negative: 0, latestNegative: [] },
    ]);

    const text = await registry.metrics();
    expect(text).toContain('agent_bridge_feedback_total{agent_instance="inst_a",rating="positive"} 2');
    expect(text).toContain('agent_bridge_feedback_total{agent_instance="inst_a",rating="negative"} 1');
    expect(text).toContain('agent_bridge_feedback_total{agent_instance="inst_b",rating="positive"} 1');
  });

  it('labels the metric through instanceLabel: an ID the service never listed is `other`', async () => {
    const registry = new Registry();
    const listed = new Set(['inst_a']);
    const store = createFeedbackStore({ redis, prefix: `${prefix}:label`, registry, instanceLabel: (id) => (listed.has(id) ? id : 'other') });
    await store.record({ ...base, instanceId: 'inst_a', agentMessageId: 'msg_1', userId: 'U1', rating: 'positive' });
    await store.record({ ...base, instanceId: 'x'.repeat(200), agentMessageId: 'msg_2', userId: 'U1', rating: 'positive' });
    await store.record({ ...base, instanceId: 'typed-by-hand', agentMessageId: 'msg_3', userId: 'U1', rating: 'negative' });
    const text = await registry.metrics();
    expect(text).toContain('agent_bridge_feedback_total{agent_instance="inst_a",rating="positive"} 1');
    expect(text).toContain('agent_bridge_feedback_total{agent_instance="other",rating="positive"} 1');
    expect(text).toContain('agent_bridge_feedback_total{agent_instance="other",rating="negative"} 1');
    expect(text).not.toContain('xxxx');
    expect(text).not.toContain('typed-by-hand');
  });

  it('counts only the last 7 days and lists the newest negative replies first', async () => {
    const store = createFeedbackStore({ redis, prefix: `${prefix}:week` });
    const now = Date.now();
    const day = 24 * 3600 * 1000;
    await store.record({ ...base, instanceId: 'i', agentMessageId: 'old', userId: 'U1', rating: 'negative', at: now - 8 * day });
    await store.record({ ...base, instanceId: 'i', agentMessageId: 'm1', userId: 'U1', rating: 'negative', at: now - 2 * day });
    await store.record({ ...base, instanceId: 'i', agentMessageId: 'm2', userId: 'U1', rating: 'negative', at: now - day });
    await store.record({ ...base, instanceId: 'i', agentMessageId: 'm2', userId: 'U2', rating: 'negative', at: now - day + 1 });
    await store.record({ ...base, instanceId: 'i', agentMessageId: 'm3', userId: 'U1', rating: 'positive', at: now });
    const [row] = await store.summary({ negatives: 5 });
    expect(row).toMatchObject({ instanceId: 'i', positive: 1, negative: 3 });
    expect(row!.latestNegative.map((n) => n.agentMessageId)).toEqual(['m2', 'm1']);
    expect(formatFeedbackSummary([row!])).toMatch(/i: 👍 1 · 👎 3/);
    expect(formatFeedbackSummary([])).toBe('No feedback in the last 7 days.');
  });

  it("scoped to a workspace, counts and lists only the votes cast there (an instance shared by two workspaces included)", async () => {
    const store = createFeedbackStore({ redis, prefix: `${prefix}:scoped` });
    const alpha = { platform: 'slack' as const, workspaceId: 'TA', channelId: 'CA' };
    const beta = { platform: 'slack' as const, workspaceId: 'TB', channelId: 'CB' };
    await store.record({ ...alpha, instanceId: 'shared', agentMessageId: 'a1', userId: 'UA', rating: 'negative', link: 'https://alpha/p1' });
    await store.record({ ...alpha, instanceId: 'alpha-only', agentMessageId: 'a2', userId: 'UA', rating: 'positive' });
    await store.record({ ...beta, instanceId: 'shared', agentMessageId: 'b1', userId: 'UB', rating: 'negative', link: 'https://beta/p1' });
    await store.record({ ...beta, instanceId: 'shared', agentMessageId: 'b2', userId: 'UB', rating: 'positive' });
    // The same team ID on another platform is another workspace.
    await store.record({ platform: 'discord', workspaceId: 'TA', channelId: 'D1', instanceId: 'shared', agentMessageId: 'd1', userId: 'UD', rating: 'negative' });

    expect(await store.summary({ workspace: { platform: 'slack', workspaceId: 'TA' } })).toEqual([
      { instanceId: 'alpha-only', positive: 1, negative: 0, latestNegative: [] },
      { instanceId: 'shared', positive: 0, negative: 1, latestNegative: [expect.objectContaining({ agentMessageId: 'a1', link: 'https://alpha/p1' })] },
    ]);
    expect(await store.summary({ workspace: { platform: 'slack', workspaceId: 'TB' } })).toEqual([
      { instanceId: 'shared', positive: 1, negative: 1, latestNegative: [expect.objectContaining({ agentMessageId: 'b1', link: 'https://beta/p1' })] },
    ]);
    expect(await store.summary({ workspace: { platform: 'slack', workspaceId: 'TNONE' } })).toEqual([]);
    // Unscoped (the store's own view) still counts everything.
    expect((await store.summary()).find((r) => r.instanceId === 'shared')).toMatchObject({ positive: 1, negative: 3 });
  });

  it('keeps at most maxEntries votes per instance, dropping the oldest', async () => {
    const p = `${prefix}:trim`;
    const store = createFeedbackStore({ redis, prefix: p, maxEntries: 3 });
    for (let i = 0; i < 5; i++) await store.record({ ...base, instanceId: 'i', agentMessageId: `m${i}`, userId: 'U1', rating: 'negative', at: Date.now() - 1000 + i });
    const [row] = await store.summary({ negatives: 10 });
    expect(row!.negative).toBe(3);
    expect(row!.latestNegative.map((n) => n.agentMessageId)).toEqual(['m4', 'm3', 'm2']);
    expect(await redis.hlen(`${p}:feedback:i:vote`)).toBe(3);
    expect((await keysUnder(redis, p)).sort()).toEqual([`${p}:feedback:i:at`, `${p}:feedback:i:vote`, `${p}:feedback:instances`]);
  });
});

describe('feedback button value', () => {
  it('round-trips and refuses what is not ours or too long', () => {
    const v = encodeFeedbackValue({ rating: 'negative', instanceId: 'inst:a', agentMessageId: 'msg_123' })!;
    expect(v.length).toBeLessThanOrEqual(100);
    expect(decodeFeedbackValue(v)).toEqual({ rating: 'negative', instanceId: 'inst:a', agentMessageId: 'msg_123' });
    expect(decodeFeedbackValue('other')).toBeUndefined();
    expect(encodeFeedbackValue({ rating: 'positive', instanceId: 'x'.repeat(60), agentMessageId: 'y'.repeat(60) })).toBeUndefined();
  });
});
