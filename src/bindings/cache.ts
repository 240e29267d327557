import type { Redis } from 'ioredis';
import { errorFields } from '../logger.js';
import type { Platform } from '../core/conversation.js';
import type { Logger } from '../logger.js';
import { isRedisConnectionError } from '../redis-errors.js';
import { DM_CHANNEL } from './dm.js';
import type { Binding, BindingStore } from './types.js';

export interface BindingCacheOptions {
  /** The store whose lookups are cached; writes go through it. */
  store: BindingStore;
  /** A connection to duplicate for the subscription (a subscribed connection can do nothing else). */
  redis: Redis;
  /** Same prefix as the store: the channel is `${prefix}:bindings:changed`. */
  prefix: string;
  /** @defaultValue 10 000 channels; the oldest entry is dropped beyond it */
  maxEntries?: number;
  logger?: Pick<Logger, 'warn'>;
  /** Called after an entry (name `platform:channelId`) or, with undefined, the whole cache was dropped on news from Redis. */
  onInvalidate?: (name: string | undefined) => void;
}

export interface CachedBindingStore extends BindingStore {
  /** Resolves once the subscription is live (lookups are cached from then on). */
  ready(): Promise<void>;
  /** Ends the subscription. */
  close(): Promise<void>;
}

/**
 * A per-process cache of binding lookups, so ingress needs no Redis round trip for the binding
 * of a channel it has seen. Every process announces its bind/unbind on a pub/sub channel and
 * every process drops that entry when the message arrives, so a change made anywhere is seen
 * everywhere as soon as the message is delivered, not after a TTL.
 *
 * The cache is only trusted while the subscription is up: while it is down (Redis restarting)
 * lookups go to Redis, and the cache is emptied when it comes back, since announcements made
 * in between were missed. A lookup that raced an announcement is not cached.
 */
export function createCachedBindingStore(options: BindingCacheOptions): CachedBindingStore {
  const { store } = options;
  const channel = `${options.prefix}:bindings:changed`;
  const maxEntries = options.maxEntries ?? 10_000;
  const entries = new Map<string, Binding | undefined>();
  // Bumped by every announcement and every loss of the subscription: a lookup started under
  // an older generation may have read what the announcement replaced.
  let generation = 0;
  let live = false;

  const invalidate = (name?: string) => {
    generation += 1;
    if (name === undefined) {
      entries.clear();
      return;
    }
    entries.delete(name);
    // Every workspace's `dm:<id>` without a binding of its own resolved through this `dm`.
    if (name.endsWith(`:${DM_CHANNEL}`)) {
      for (const cached of [...entries.keys()]) if (cached.startsWith(`${name}:`)) entries.delete(cached);
    }
  };

  const sub = options.redis.duplicate({ connectionName: `${options.prefix}:bindings-cache` });
  // A Redis outage is logged once, as lost and back, by the composition root.
  sub.on('error', (err) => {
    if (!isRedisConnectionError(err)) options.logger?.warn({ ...errorFields(err) }, 'binding cache subscription error');
  });
  sub.on('message', (ch: string, name: string) => {
    if (ch !== channel) return;
    invalidate(name);
    options.onInvalidate?.(name);
  });
  sub.on('close', () => {
    live = false;
    invalidate();
  });
  // ioredis subscribes again by itself after a reconnect; the cache starts empty from there.
  const subscribe = async () => {
    await sub.subscribe(channel);
    invalidate();
    live = true;
    options.onInvalidate?.(undefined);
  };
  let subscribed = subscribe();
  subscribed.catch(() => {});
  let reconnects = 0;
  sub.on('ready', () => {
    if (reconnects++ === 0) return; // the first 'ready' is the subscribe above
    subscribed = subscribe();
    subscribed.catch(() => {});
  });

  const key = (platform: Platform, channelId: string) => `${platform}:${channelId}`;
  const announce = (name: string) => {
    invalidate(name);
    return options.redis.publish(channel, name);
  };

  return {
    async get(platform, channelId) {
      const name = key(platform, channelId);
      if (live && entries.has(name)) return entries.get(name);
      const seen = generation;
      const binding = await store.get(platform, channelId);
      if (live && seen === generation) {
        if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
        entries.set(name, binding);
      }
      return binding;
    },

    async set(platform, channelId, binding) {
      await store.set(platform, channelId, binding);
      await announce(key(platform, channelId));
    },

    async remove(platform, channelId) {
      const wasInForce = await store.remove(platform, channelId);
      await announce(key(platform, channelId));
      return wasInForce;
    },

    list: (platform) => store.list(platform),

    ready: () => subscribed,

    async close() {
      live = false;
      entries.clear();
      await sub.quit().catch(() => sub.disconnect());
    },
  };
}
