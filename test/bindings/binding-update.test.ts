import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createBindingStore } from '../../src/bindings/store.js';
import type { Binding } from '../../src/bindings/types.js';
import { cleanup, REDIS_URL, testRedis } from '../support/redis-helpers.js';

const { redis, prefix } = testRedis();
const conns: Redis[] = [];
afterAll(async () => {
  await Promise.all(conns.map((c) => c.quit()));
  await cleanup(redis, prefix);
});

const admin = (instanceId: string, extra: Partial<Binding> = {}): Binding => ({ instanceId, mode: 'mention', errorPolicy: 'reply', context: 'off', source: 'admin', ...extra });

/** A store on a connection of its own: another process, as far as Redis can tell. */
function storeOf(p: string, defaults = [{ platform: 'slack' as const, channelId: 'CDEF', instanceId: 'inst_default' }]) {
  const conn = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  conns.push(conn);
  return createBindingStore({ redis: conn, prefix: p, defaults });
}

describe('BindingStore.update and remove: one atomic change each', () => {
  it('update sees the binding in force (a BINDINGS default included) and returns it with the one stored', async () => {
    const store = storeOf(`${prefix}:one`);
    const done = await store.update('slack', 'CDEF', (current) => ({ ...current!, instanceId: 'inst_b', source: 'admin' }));
    expect(done.previous).toMatchObject({ instanceId: 'inst_default', source: 'default' });
    expect(done.binding).toMatchObject({ instanceId: 'inst_b', source: 'admin' });
    expect(await store.get('slack', 'CDEF')).toMatchObject({ instanceId: 'inst_b' });
    // A change that stores nothing leaves the binding (and a missing one) as it was.
    expect(await store.update('slack', 'CDEF', () => undefined)).toMatchObject({ previous: { instanceId: 'inst_b' }, binding: undefined });
    expect(await store.update('slack', 'CNONE', () => undefined)).toEqual({ previous: undefined, binding: undefined });
    expect(await store.get('slack', 'CDEF')).toMatchObject({ instanceId: 'inst_b' });
    expect(await redis.hexists(`${prefix}:one:bindings`, 'slack:CNONE')).toBe(0);
  });

  it('concurrent updates from many processes form one chain: each replaced binding was replaced once', async () => {
    const p = `${prefix}:chain`;
    const stores = Array.from({ length: 4 }, () => storeOf(p));
    await stores[0]!.set('slack', 'C1', admin('inst_start'));
    const ids = Array.from({ length: 12 }, (_, i) => `inst_${i}`);
    const done = await Promise.all(ids.map((id, i) => stores[i % stores.length]!.update('slack', 'C1', () => admin(id))));
    const replaced = done.map((d) => d.previous!.instanceId);
    // Every binding but the last one standing was replaced exactly once; nobody saw a stale one.
    const last = (await stores[0]!.get('slack', 'C1'))!.instanceId;
    expect(new Set(replaced).size).toBe(ids.length);
    expect([...replaced].sort()).toEqual(['inst_start', ...ids.filter((id) => id !== last)].sort());
  });

  it('concurrent removes: exactly one of them removed the binding', async () => {
    const p = `${prefix}:removes`;
    const stores = Array.from({ length: 3 }, () => storeOf(p));
    for (const channel of ['C1', 'CDEF']) {
      if (channel === 'C1') await stores[0]!.set('slack', channel, admin('inst_a'));
      const removed = await Promise.all(stores.map((s) => s.remove('slack', channel)));
      expect(removed.filter(Boolean)).toHaveLength(1);
      expect(await stores[1]!.get('slack', channel)).toBeUndefined();
    }
  });

  it('a workspace DM change is redone when the shared `dm` it fell back to changed meanwhile', async () => {
    const p = `${prefix}:dm`;
    const store = storeOf(p, []);
    const conn = conns.at(-1)!; // the store's: what it sends there reaches Redis in order, before the write
    await store.set('slack', 'dm', admin('inst_shared', { errorPolicy: 'silent' }));
    let calls = 0;
    const done = await store.update('slack', 'dm:TA', (current) => {
      // The first time, another process rebinds the shared `dm` between the read and the write.
      if (calls++ === 0) void conn.hset(`${p}:bindings`, 'slack:dm', JSON.stringify(admin('inst_other', { errorPolicy: 'reaction' })));
      return admin('inst_ta', { errorPolicy: current!.errorPolicy });
    });
    expect(calls).toBe(2);
    expect(done.previous).toMatchObject({ instanceId: 'inst_other' });
    expect(done.binding).toMatchObject({ instanceId: 'inst_ta', errorPolicy: 'reaction' });
  });

  it('a setting whose channel is unbound between its read and its write is not written (the binding stays gone)', async () => {
    const p = `${prefix}:set-unbind`;
    const store = storeOf(p, []);
    const conn = conns.at(-1)!;
    await store.set('slack', 'C1', admin('inst_a'));
    const seen: Array<string | undefined> = [];
    const done = await store.update('slack', 'C1', (current) => {
      seen.push(current?.instanceId);
      // The first time, an unbind elsewhere lands between this read and the write.
      if (seen.length === 1) void conn.hdel(`${p}:bindings`, 'slack:C1');
      return current && { ...current, errorPolicy: 'silent' };
    });
    expect(seen).toEqual(['inst_a', undefined]);
    expect(done).toEqual({ previous: undefined, binding: undefined });
    expect(await redis.hexists(`${p}:bindings`, 'slack:C1')).toBe(0);
  });
});
