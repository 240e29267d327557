import type { Redis } from 'ioredis';
import type { Config } from '../../src/config/load.js';
import { createInvalidationFeed, type InvalidationFeed } from '../../src/invalidation-feed.js';
import type { Logger } from '../../src/logger.js';
import { createGoneChannels, goneChangedChannel, readMark, type GoneChannels, type GoneCode } from './gone-channels.js';

export interface GoneCacheOptions {
  logger?: Pick<Logger, 'warn'> | undefined;
  /** @defaultValue 10 000 channels; the oldest entry is dropped beyond it */
  maxEntries?: number;
  /** Called after a channel's entry or (undefined) every entry was dropped on news from Redis (tests). */
  onInvalidate?: (channel: string | undefined) => void;
}

export interface CachedGoneChannels extends GoneChannels {
  /** Resolves once the subscription is live (it starts with the first lookup). */
  ready(): Promise<void>;
  /** Ends the subscription (idempotent). */
  close(): Promise<void>;
}

/**
 * The worker's view of the gone marks (gone-channels.ts), asked before every agent call and every
 * working reaction: served from memory, so a message in a channel that is not gone costs no Redis
 * round trip. Each mark and clear is announced on pub/sub in the same step as it is written, and
 * the entry dropped here when the news arrives: a channel archived while its message waits is
 * seen as such by the time the worker takes the message (Redis writes the news to this
 * subscription before it answers the ingress, whose ack Slack waits for). Trusted only while the
 * subscription is up (src/invalidation-feed.ts). A cached mark lapses when its key would.
 *
 * The subscription (one more connection) is opened by the first lookup, so a process that never
 * asks (an ingress-only one) never opens it.
 */
export function createCachedGoneChannels(redis: Redis, config: Readonly<Config>, options: GoneCacheOptions = {}): CachedGoneChannels {
  const store = createGoneChannels(redis, config);
  const maxEntries = options.maxEntries ?? 10_000;
  const entries = new Map<string, { code: GoneCode | undefined; until: number }>();
  let feed: InvalidationFeed | undefined;
  let closed = false;
  const close = async () => {
    closed = true;
    redis.off('end', endWithRedis);
    await feed?.close();
  };
  // A port no one closes (built by a test) must not outlive the connection it duplicated.
  const endWithRedis = () => void close();
  const feedOf = () => {
    if (feed) return feed;
    redis.once('end', endWithRedis);
    return (feed = createInvalidationFeed({
      redis,
      channel: goneChangedChannel(config),
      connectionName: `${goneChangedChannel(config)}:cache`,
      what: 'Slack gone-channel cache',
      logger: options.logger,
      drop: (channel) => (channel === undefined ? entries.clear() : void entries.delete(channel)),
      onInvalidate: options.onInvalidate,
    }));
  };

  return {
    async get(channel) {
      // After close (shutdown), lookups go to Redis rather than open a subscription again.
      const f = closed ? undefined : feedOf();
      const entry = entries.get(channel);
      if (f?.live() && entry && entry.until > Date.now()) return entry.code;
      const read = () => readMark(redis, config, channel);
      const mark = f
        ? await f.lookup(read, (m) => {
            entries.delete(channel);
            if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
            entries.set(channel, m);
          })
        : await read();
      return mark.code;
    },
    async mark(channel, code) {
      const was = await store.mark(channel, code);
      feed?.invalidate(channel);
      return was;
    },
    async clear(channel) {
      await store.clear(channel);
      feed?.invalidate(channel);
    },
    ready: () => (closed ? Promise.resolve() : feedOf().ready()),
    close,
  };
}
