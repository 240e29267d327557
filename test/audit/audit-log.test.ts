import { afterAll, describe, expect, it } from 'vitest';
import { createAuditLog, REFUSED_PER_WINDOW } from '../../src/audit/audit-log.js';
import { cleanup, dumpAll, testRedis } from '../support/redis-helpers.js';

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
    await redis.xadd(`${prefix}:f:audit:slack:T1`, '*', 'garbage', '1');
    const t1 = await log.recent(5, { platform: 'slack', workspaceId: 'T1' });
    expect(t1.map((e) => e.action)).toEqual(['unbind']);
    expect((await log.recent(5, { platform: 'discord' })).map((e) => e.workspaceId)).toEqual(['G1']);
    expect((await log.recent(3, { workspaceId: 'T2' })).map((e) => e.detail)).toEqual(['n449', 'n448', 'n447']);
  });

  it('bounds the stream length', async () => {
    const p = `${prefix}:cap`;
    const log = createAuditLog({ redis, prefix: p, maxEntries: 10 });
    for (let i = 0; i < 400; i++) await log.record({ ...base, action: 'set', detail: `n${i}` });
    const len = await redis.xlen(`${p}:audit:slack:T1`);
    // Exactly AUDIT_MAX_ENTRIES, the newest.
    expect(len).toBe(10);
    expect((await log.recent(1))[0]!.detail).toBe('n399');
  });

  it('keeps one stream per workspace: a busy workspace does not push out another one\'s entries', async () => {
    const p = `${prefix}:ws`;
    const log = createAuditLog({ redis, prefix: p, maxEntries: 10 });
    await log.record({ ...base, action: 'bind', instanceId: 'inst_keep', at: 1000 });
    for (let i = 0; i < 400; i++) await log.record({ ...base, workspaceId: 'T-busy', action: 'set', detail: `n${i}` });
    expect((await log.recent(5, { platform: 'slack', workspaceId: 'T1' })).map((e) => e.instanceId)).toEqual(['inst_keep']);
    // Unfiltered reads merge the workspaces, newest first.
    expect((await log.recent(2)).map((e) => e.detail)).toEqual(['n399', 'n398']);
  });

  it('refused attempts cannot flush real entries out, and only a few per person per window are written, then a count', async () => {
    const p = `${prefix}:refused`;
    const log = createAuditLog({ redis, prefix: p, maxEntries: 10 });
    for (let i = 0; i < 5; i++) await log.record({ ...base, action: 'bind', instanceId: `inst_${i}` });
    // One non-admin hammers an admin command; many others try once each.
    for (let i = 0; i < 300; i++) await log.record({ ...base, actor: 'U-pest', action: 'refused', outcome: 'refused', detail: 'bind' });
    for (let i = 0; i < 200; i++) await log.record({ ...base, actor: `U-other-${i}`, action: 'refused', outcome: 'refused', detail: 'unbind' });

    const entries = await log.recent(1000, { platform: 'slack', workspaceId: 'T1' });
    const real = entries.filter((e) => e.action === 'bind').map((e) => e.instanceId);
    expect(real).toEqual(['inst_4', 'inst_3', 'inst_2', 'inst_1', 'inst_0']);
    // The pest's 300 attempts made a handful of entries (which the others' refusals may since have trimmed away).
    expect(entries.filter((e) => e.actor === 'U-pest').length).toBeLessThanOrEqual(REFUSED_PER_WINDOW);
    expect(await redis.xlen(`${p}:audit:refused:slack:T1`)).toBeLessThanOrEqual(110);

    // When the window ends, the next refusal is written with the count of those it stood for.
    await redis.del(`${p}:audit:refused-gate:slack:T1:U-pest`);
    await log.record({ ...base, actor: 'U-pest', action: 'refused', outcome: 'refused', detail: 'bind' });
    const [latest] = await log.recent(1, { platform: 'slack', workspaceId: 'T1' });
    expect(latest).toMatchObject({ actor: 'U-pest', action: 'refused', detail: `bind (and ${300 - REFUSED_PER_WINDOW} more refused attempt(s) before this one)` });
    expect((await log.recent(1000, { platform: 'slack', workspaceId: 'T1' })).filter((e) => e.action === 'bind')).toHaveLength(5);
  });
});
