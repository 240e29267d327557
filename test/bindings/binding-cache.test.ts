import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createCachedBindingStore, type CachedBindingStore } from '../../src/bindings/cache.js';
import { createBindingStore } from '../../src/bindings/store.js';
import type { Binding, BindingStore } from '../../src/bindings/types.js';
import { invalidations } from '../support/invalidations.js';
import { cleanup, REDIS_URL, testRedis } from '../support/redis-helpers.js';

const { redis, prefix } = testRedis();
const opened: Array<{ cache: CachedBindingStore; redis: Redis }> = [];
afterAll(async () => {
  for (const p of opened) {
    await p.cache.close();
    await p.redis.quit();
  }
  await cleanup(redis, prefix);
});

const binding = (instanceId: string): Binding => ({ instanceId, mode: 'mention', errorPolicy: 'reply', context: 'off', source: 'admin' });

/** One "process": its own connections, store and cache; counts the lookups that reached Redis. */
async function proc(p: string) {
  const conn = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  const inner = createBindingStore({ redis: conn, prefix: p, defaults: [{ platform: 'slack', channelId: 'CDEF', instanceId: 'inst_default' }] });
  let lookups = 0;
  const counted: BindingStore = { ...inner, get: (...args) => (lookups++, inner.get(...args)) };
  const news = invalidations();
  const cache = createCachedBindingStore({ store: counted, redis: conn, prefix: p, onInvalidate: news.onInvalidate });
  opened.push({ cache, redis: conn });
  await cache.ready();
  return {
    cache,
    lookups: () => lookups,
    /** Resolves when this process has dropped `name` (undefined: everything) on news from Redis. */
    invalidated: news.invalidated,
  };
}

describe('binding cache', () => {
  it('a repeated lookup does not go to Redis, negative answers and BINDINGS defaults included', async () => {
    const a = await proc(`${prefix}:hot`);
    expect(await a.cache.get('slack', 'C1')).toBeUndefined();
    expect(await a.cache.get('slack', 'CDEF')).toMatchObject({ instanceId: 'inst_default' });
    const before = a.lookups();
    for (let i = 0; i < 5; i++) {
      expect(await a.cache.get('slack', 'C1')).toBeUndefined();
      expect(await a.cache.get('slack', 'CDEF')).toMatchObject({ instanceId: 'inst_default' });
    }
    expect(a.lookups()).toBe(before);
  });

  it('bind and unbind in one process are seen by the other as soon as the announcement arrives', async () => {
    const p = `${prefix}:two`;
    const a = await proc(p);
    const b = await proc(p);
    expect(await b.cache.get('slack', 'C1')).toBeUndefined(); // cached in b

    const seen = b.invalidated('slack:C1');
    await a.cache.set('slack', 'C1', binding('inst_a'));
    await seen;
    expect(await b.cache.get('slack', 'C1')).toMatchObject({ instanceId: 'inst_a' });
    const lookups = b.lookups();
    expect(await b.cache.get('slack', 'C1')).toMatchObject({ instanceId: 'inst_a' });
    expect(b.lookups()).toBe(lookups);

    const gone = b.invalidated('slack:C1');
    expect(await a.cache.remove('slack', 'C1')).toBeDefined();
    await gone;
    expect(await b.cache.get('slack', 'C1')).toBeUndefined();

    // Unbinding a BINDINGS default masks it everywhere.
    expect(await b.cache.get('slack', 'CDEF')).toMatchObject({ instanceId: 'inst_default' });
    const masked = b.invalidated('slack:CDEF');
    await a.cache.remove('slack', 'CDEF');
    await masked;
    expect(await b.cache.get('slack', 'CDEF')).toBeUndefined();
  });

  it('after its subscription drops, a process forgets everything it cached (announcements may have been missed)', async () => {
    const p = `${prefix}:reconnect`;
    const b = await proc(p);
    expect(await b.cache.get('slack', 'C9')).toBeUndefined();

    // A change b cannot hear about: written while its subscription is cut.
    const list = (await redis.client('LIST')) as string;
    const id = new RegExp(`id=(\\d+) .*name=${p}:bindings-cache`).exec(list)?.[1];
    expect(id).toBeDefined();
    const resubscribed = b.invalidated(undefined);
    await redis.client('KILL', 'ID', id!);
    await redis.hset(`${p}:bindings`, 'slack:C9', JSON.stringify(binding('inst_missed')));
    await resubscribed;
    expect(await b.cache.get('slack', 'C9')).toMatchObject({ instanceId: 'inst_missed' });
  });

  it("a change of the shared `dm` binding drops every workspace DM that resolved through it", async () => {
    const p = `${prefix}:dm`;
    const a = await proc(p);
    const b = await proc(p);
    await a.cache.set('slack', 'dm', binding('inst_shared'));
    expect(await b.cache.get('slack', 'dm:TA')).toMatchObject({ instanceId: 'inst_shared' }); // cached in b
    expect(await b.cache.get('slack', 'dm:TB')).toMatchObject({ instanceId: 'inst_shared' });

    const seen = b.invalidated('slack:dm');
    await a.cache.set('slack', 'dm', binding('inst_new'));
    await seen;
    expect(await b.cache.get('slack', 'dm:TA')).toMatchObject({ instanceId: 'inst_new' });
    expect(await b.cache.get('slack', 'dm:TB')).toMatchObject({ instanceId: 'inst_new' });

    // A workspace's own DM binding changes only that workspace.
    const own = b.invalidated('slack:dm:TA');
    await a.cache.set('slack', 'dm:TA', binding('inst_a'));
    await own;
    expect(await b.cache.get('slack', 'dm:TA')).toMatchObject({ instanceId: 'inst_a' });
    expect(await b.cache.get('slack', 'dm:TB')).toMatchObject({ instanceId: 'inst_new' });
  });
});
