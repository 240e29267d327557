import { afterAll, describe, expect, it } from 'vitest';
import { createBindingStore } from '../../src/bindings/store.js';
import type { Binding } from '../../src/bindings/types.js';
import { dmBindingChannel } from '../../src/bindings/dm.js';
import { cleanup, testRedis } from '../support/redis-helpers.js';

const { redis, prefix } = testRedis();
afterAll(() => cleanup(redis, prefix));

const admin = (instanceId: string, extra: Partial<Binding> = {}): Binding => ({
  instanceId,
  mode: 'all',
  errorPolicy: 'reaction',
  context: 'thread',
  source: 'admin',
  updatedBy: 'U1',
  updatedAt: 1_700_000_000_000,
  ...extra,
});

describe('binding store', () => {
  const p = `${prefix}:a`;
  const store = createBindingStore({
    redis,
    prefix: p,
    defaults: [
      { platform: 'slack', channelId: 'C1', instanceId: 'inst_default' },
      { platform: 'discord', channelId: 'dm', instanceId: 'inst_dm' },
    ],
  });

  it('returns a BINDINGS default when Redis holds nothing', async () => {
    expect(await store.get('slack', 'C1')).toEqual({
      instanceId: 'inst_default',
      mode: 'mention',
      errorPolicy: 'reply',
      context: 'off',
      source: 'default',
    });
    expect(await store.get('discord', 'dm')).toMatchObject({ instanceId: 'inst_dm' });
    expect(await store.get('slack', 'C2')).toBeUndefined();
    // The same channel ID on another platform is another channel.
    expect(await store.get('discord', 'C1')).toBeUndefined();
  });

  it('lets a stored binding override the default, and keeps it in the one hash under the prefix', async () => {
    await store.set('slack', 'C1', admin('inst_b', { quota: { userPerMinute: 3 } }));
    expect(await store.get('slack', 'C1')).toEqual(admin('inst_b', { quota: { userPerMinute: 3 } }));
    expect(await redis.hexists(`${p}:bindings`, 'slack:C1')).toBe(1);
  });

  it('masks a default with a tombstone on remove, until the next set', async () => {
    expect(await store.remove('slack', 'C1')).toBeDefined();
    expect(await store.get('slack', 'C1')).toBeUndefined();
    expect(await store.remove('slack', 'C1')).toBeUndefined();
    expect(await store.get('slack', 'C1')).toBeUndefined();
    expect((await store.list('slack')).map((b) => b.channelId)).not.toContain('C1');

    await store.set('slack', 'C1', admin('inst_c'));
    expect(await store.get('slack', 'C1')).toMatchObject({ instanceId: 'inst_c' });
  });

  it('removes a plain binding outright', async () => {
    await store.set('slack', 'C9', admin('inst_x'));
    expect(await store.remove('slack', 'C9')).toBeDefined();
    expect(await redis.hexists(`${p}:bindings`, 'slack:C9')).toBe(0);
    expect(await store.remove('slack', 'C9')).toBeUndefined();
  });

  it('lists stored bindings and defaults, by platform', async () => {
    await store.set('discord', '998877', admin('inst_d'));
    const all = await store.list();
    expect(all.map((b) => `${b.platform}:${b.channelId}=${b.binding.instanceId}`)).toEqual([
      'discord:998877=inst_d',
      'discord:dm=inst_dm',
      'slack:C1=inst_c',
    ]);
    expect((await store.list('discord')).every((b) => b.platform === 'discord')).toBe(true);
  });

  it('keeps channel IDs that contain a colon intact', async () => {
    await store.set('web', 'room:1', admin('inst_w'));
    expect(await store.get('web', 'room:1')).toMatchObject({ instanceId: 'inst_w' });
    expect((await store.list('web')).map((b) => b.channelId)).toEqual(['room:1']);
  });

  it('ignores corrupt entries without throwing, falling back to the default', async () => {
    const warnings: unknown[] = [];
    const s = createBindingStore({
      redis,
      prefix: `${prefix}:corrupt`,
      defaults: [{ platform: 'slack', channelId: 'C1', instanceId: 'inst_default' }],
      logger: { warn: (...args: unknown[]) => void warnings.push(args) } as never,
    });
    const key = `${prefix}:corrupt:bindings`;
    await redis.hset(key, 'slack:C1', '{not json', 'slack:C2', JSON.stringify({ instanceId: 'x', mode: 'loud' }), 'nonsense', '1');
    expect(await s.get('slack', 'C1')).toMatchObject({ instanceId: 'inst_default', source: 'default' });
    expect(await s.get('slack', 'C2')).toBeUndefined();
    expect((await s.list()).map((b) => b.channelId)).toEqual(['C1']);
    expect(warnings.length).toBeGreaterThan(0);
  });

  it('refuses to store an invalid binding', async () => {
    await expect(store.set('slack', 'C5', { ...admin('x'), mode: 'loud' as never })).rejects.toThrow();
  });
});

describe('per-workspace DM bindings (`dm:<workspace>`)', () => {
  it('each workspace has its own; one without falls back to the BINDINGS `dm` default', async () => {
    const p = `${prefix}:dm-default`;
    const store = createBindingStore({ redis, prefix: p, defaults: [{ platform: 'slack', channelId: 'dm', instanceId: 'inst_everyone' }] });
    expect(dmBindingChannel('TA')).toBe('dm:TA');
    expect(await store.get('slack', 'dm:TA')).toMatchObject({ instanceId: 'inst_everyone', source: 'default' });

    await store.set('slack', 'dm:TA', admin('inst_a'));
    expect(await store.get('slack', 'dm:TA')).toMatchObject({ instanceId: 'inst_a' });
    expect(await store.get('slack', 'dm:TB')).toMatchObject({ instanceId: 'inst_everyone' });
    expect(await store.get('slack', 'dm')).toMatchObject({ instanceId: 'inst_everyone' });

    // Unbinding in A masks the default for A only.
    expect(await store.remove('slack', 'dm:TA')).toBeDefined();
    expect(await store.get('slack', 'dm:TA')).toBeUndefined();
    expect(await store.get('slack', 'dm:TB')).toMatchObject({ instanceId: 'inst_everyone' });
    expect(await store.remove('slack', 'dm:TB')).toBeDefined();
    expect(await store.get('slack', 'dm:TB')).toBeUndefined();
    expect(await store.get('slack', 'dm')).toMatchObject({ instanceId: 'inst_everyone' });
  });

  it('a legacy binding stored under the shared `dm` stays in force as the fallback, never lost', async () => {
    const p = `${prefix}:dm-legacy`;
    const store = createBindingStore({ redis, prefix: p });
    await redis.hset(`${p}:bindings`, 'slack:dm', JSON.stringify(admin('inst_legacy')));
    expect(await store.get('slack', 'dm:TA')).toMatchObject({ instanceId: 'inst_legacy' });
    await store.set('slack', 'dm:TB', admin('inst_b'));
    expect(await store.remove('slack', 'dm:TB')).toBeDefined();
    // B's unbind masks the legacy binding for B; A and the stored `dm` itself are untouched.
    expect(await store.get('slack', 'dm:TB')).toBeUndefined();
    expect(await store.get('slack', 'dm:TA')).toMatchObject({ instanceId: 'inst_legacy' });
    expect(JSON.parse((await redis.hget(`${p}:bindings`, 'slack:dm'))!)).toMatchObject({ instanceId: 'inst_legacy' });
  });

  it('with no fallback in force, unbinding a workspace DM deletes the entry (no tombstone left)', async () => {
    const p = `${prefix}:dm-plain`;
    const store = createBindingStore({ redis, prefix: p });
    expect(await store.get('slack', 'dm:TA')).toBeUndefined();
    await store.set('slack', 'dm:TA', admin('inst_a'));
    expect(await store.remove('slack', 'dm:TA')).toBeDefined();
    expect(await redis.hexists(`${p}:bindings`, 'slack:dm:TA')).toBe(0);
    expect(await store.remove('slack', 'dm:TA')).toBeUndefined();
    // `dm` itself and Discord's `dm` have no fallback.
    expect(dmBindingChannel('dm')).toBe('dm');
    expect(dmBindingChannel(undefined)).toBe('dm');
  });
});
