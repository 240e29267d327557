import type { Redis } from 'ioredis';
import type { Platform } from '../core/conversation.js';
import type { Logger } from '../logger.js';
import { createInvalidationFeed } from '../invalidation-feed.js';
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
  const maxEntries = options.maxEntries ?? 10_000;
  const entries = new Map<string, Binding | undefined>();

  const drop = (name: string | undefined) => {
    if (name === undefined) return entries.clear();
    entries.delete(name);
    // Every workspace's `dm:<id>` without a binding of its own resolved through this `dm`.
    if (name.endsWith(`:${DM_CHANNEL}`)) {
      for (const cached of [...entries.keys()]) if (cached.startsWith(`${name}:`)) entries.delete(cached);
    }
  };
  const feed = createInvalidationFeed({
    redis: options.redis,
    channel: `${options.prefix}:bindings:changed`,
    connectionName: `${options.prefix}:bindings-cache`,
    what: 'binding cache',
    logger: options.logger,
    drop,
    onInvalidate: options.onInvalidate,
  });

  const key = (platform: Platform, channelId: string) => `${platform}:${channelId}`;

  return {
    async get(platform, channelId) {
      const name = key(platform, channelId);
      if (feed.live() && entries.has(name)) return entries.get(name);
      return feed.lookup(
        () => store.get(platform, channelId),
        (binding) => {
          if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
          entries.set(name, binding);
        },
      );
    },

    async set(platform, channelId, binding) {
      await store.set(platform, channelId, binding);
      await feed.announce(key(platform, channelId));
    },

    async update(platform, channelId, change) {
      const done = await store.update(platform, channelId, change);
      await feed.announce(key(platform, channelId));
      return done;
    },

    async remove(platform, channelId) {
      const previous = await store.remove(platform, channelId);
      await feed.announce(key(platform, channelId));
      return previous;
    },

    list: (platform) => store.list(platform),

    ready: () => feed.ready(),

    close: () => feed.close(),
  };
}
