import type { Redis } from 'ioredis';
import { errorFields, type Logger } from './logger.js';
import { isRedisConnectionError } from './redis-errors.js';

export interface InvalidationFeedOptions {
  /** A connection to duplicate for the subscription (a subscribed connection can do nothing else). */
  redis: Redis;
  /** The pub/sub channel every process announces its changes on. */
  channel: string;
  /** The subscription's connection name (CLIENT LIST). */
  connectionName: string;
  /** What is cached, for the warning on an unexpected subscription error. */
  what: string;
  logger?: Pick<Logger, 'warn'> | undefined;
  /** Drops the cached entry `name`, or with undefined every entry. */
  drop: (name: string | undefined) => void;
  /** Called after an entry or (undefined) the whole cache was dropped on news from Redis (tests). */
  onInvalidate?: ((name: string | undefined) => void) | undefined;
}

export interface InvalidationFeed {
  /** Whether cached entries may be trusted: only while the subscription is up. */
  live(): boolean;
  /**
   * Runs a lookup in Redis and hands its answer to `keep` only if nothing was announced, and the
   * subscription was not lost, while it ran (the answer may be what the announcement replaced).
   */
  lookup<T>(read: () => Promise<T>, keep: (value: T) => void): Promise<T>;
  /** Drops `name` here and tells every other process (after a write of it). */
  announce(name: string): Promise<void>;
  /** Drops `name` here without telling anyone (the write itself published the news). */
  invalidate(name: string | undefined): void;
  /** Resolves once the subscription is live. */
  ready(): Promise<void>;
  /** Ends the subscription and empties the cache. */
  close(): Promise<void>;
}

/**
 * The part of a per-process cache of Redis data that keeps it honest: a pub/sub subscription on
 * which every process announces what it changed, so each drops that entry as soon as the news
 * arrives (not after a TTL). The cache is only trusted while the subscription is up: while it is
 * down (Redis restarting) lookups go to Redis, and the cache is emptied when it comes back,
 * since announcements made in between were missed. A lookup that raced an announcement is not
 * kept. Used by the binding cache (src/bindings/cache.ts) and announced-marks.ts (Slack's gone
 * channels, Discord's gone places).
 */
export function createInvalidationFeed(options: InvalidationFeedOptions): InvalidationFeed {
  const { channel } = options;
  // Bumped by every announcement and every loss of the subscription: a lookup started under
  // an older generation may have read what the announcement replaced.
  let generation = 0;
  let live = false;
  const invalidate = (name: string | undefined) => {
    generation += 1;
    options.drop(name);
  };

  const sub = options.redis.duplicate({ connectionName: options.connectionName });
  // A Redis outage is logged once, as lost and back, by the composition root.
  sub.on('error', (err) => {
    if (!isRedisConnectionError(err)) options.logger?.warn({ ...errorFields(err) }, `${options.what} subscription error`);
  });
  sub.on('message', (ch: string, name: string) => {
    if (ch !== channel) return;
    invalidate(name);
    options.onInvalidate?.(name);
  });
  sub.on('close', () => {
    live = false;
    invalidate(undefined);
  });
  // ioredis subscribes again by itself after a reconnect; the cache starts empty from there.
  const subscribe = async () => {
    await sub.subscribe(channel);
    invalidate(undefined);
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

  return {
    live: () => live,
    async lookup(read, keep) {
      const seen = generation;
      const value = await read();
      if (live && seen === generation) keep(value);
      return value;
    },
    async announce(name) {
      invalidate(name);
      await options.redis.publish(channel, name);
    },
    invalidate,
    ready: () => subscribed,
    async close() {
      live = false;
      options.drop(undefined);
      await sub.quit().catch(() => sub.disconnect());
    },
  };
}
