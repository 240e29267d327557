import { afterAll, describe, expect, it } from 'vitest';
import { createAuditLog } from '../../src/audit/audit-log.js';
import { cleanup, dumpAll, testRedis } from './redis-helpers.js';

const { redis, prefix } = testRedis();
afterAll(() => cleanup(redis, prefix));

const base = { actor: 'U1', platform: 'slack' as const, workspaceId: 'T1', channelId: 'C1', outcome: 'ok' as const };

describe('audit log', () => {
  it('returns entries newest first with every field', async () => {
    const log = createAuditLog({ redis, prefix: `${prefix}:a` });
    await log.record({ ...base, action: 'bind', instanceId: 'inst_a', detail: 'mode=all', at: 1000 });
    await log.record({ ...base, action: 'credential', actorName: 'Ada', instanceId: 'inst_a', key: 'OPENAI_API_KEY', at: 2000 });
    await log.record({ ...base, action: 'refused', outcome: 'refused', detail: 'bind' });
    const entries = await log.recent(10);
    expect(entries.map((e) => e.action)).toEqual(['refused', 'credential', 'bind']);
    expect(entries[1]).toMatchObject({ actor: 'U1', actorName: 'Ada', key: 'OPENAI_API_KEY', instanceId: 'inst_a', at: 2000, outcome: 'ok' });
    expect(entries[1]).not.toHaveProperty('value');
    expect(entries[0]!.at).toBeGreaterThan(1_600_000_000_000);
    expect(entries[0]!.id).toMatch(/^\d+-\d+$/);
    expect(await log.recent(1)).toHaveLength(1);
    expect(await log.recent(0)).toEqual([]);
  });

  it('stores only the listed fields: a stray value property never reaches Redis', async () => {
    const p = `${prefix}:secret`;
    const log = createAuditLog({ redis, prefix: p });
    await log.record({ ...base, action: 'credential', key: 'K', value: 'sk-live-very-secret' } as never);
    const dump = (await dumpAll(redis, p)).join('\n');
    expect(dump).toContain('K');
    expect(dump).not.toContain('sk-live-very-secret');
  });

  it('filters by platform and workspace', async () => {
    const log = createAuditLog({ redis, prefix: `${prefix}:f` });
    for (let i = 0; i < 450; i++) await log.record({ ...base, action: 'set', workspaceId: 'T2', detail: `n${i}` });
    await log.record({ ...base, action: 'bind', platform: 'discord', workspaceId: 'G1' });
    await log.record({ ...base, action: 'unbind', detail: 'old' });
    await redis.xadd(`${prefix}:f:audit`, '*', 'garbage', '1');
    const t1 = await log.recent(5, { platform: 'slack', workspaceId: 'T1' });
    expect(t1.map((e) => e.action)).toEqual(['unbind']);
    expect((await log.recent(5, { platform: 'discord' })).map((e) => e.workspaceId)).toEqual(['G1']);
    expect((await log.recent(3, { workspaceId: 'T2' })).map((e) => e.detail)).toEqual(['n449', 'n448', 'n447']);
  });

  it('bounds the stream length', async () => {
    const p = `${prefix}:cap`;
    const log = createAuditLog({ redis, prefix: p, maxEntries: 10 });
    for (let i = 0; i < 400; i++) await log.record({ ...base, action: 'set', detail: `n${i}` });
    const len = await redis.xlen(`${p}:audit`);
    // MAXLEN ~ trims whole stream nodes (100 entries by default).
    expect(len).toBeGreaterThanOrEqual(10);
    expect(len).toBeLessThanOrEqual(110);
    expect((await log.recent(1))[0]!.detail).toBe('n399');
  });
});
