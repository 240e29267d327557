import type { Redis } from 'ioredis';
import { createAnnouncedMarks } from '../../src/announced-marks.js';
import type { Config } from '../../src/config/load.js';
import type { Logger } from '../../src/logger.js';
import { asCode, createGoneChannels, goneChangedChannel, goneKey, type GoneChannels } from './gone-channels.js';

export interface GoneCacheOptions {
  logger?: Pick<Logger, 'warn'> | undefined;
  /** @defaultValue 10 000 channels; the oldest entry is dropped beyond it */
  maxEntries?: number;
  /** Called after a channel's entry or (undefined) every entry was dropped on news from Redis (tests). */
  onInvalidate?: (channel: string | undefined) => void;
}

/** What this worker heard announced (gone marks made or cleared), in order: for refusals it remembers. */
export interface GoneNews {
  /** A point in the news heard so far (it only grows). */
  news(): number;
  /** Whether a mark or clear of `channel` was announced to this worker after point `since` (forgotten past `maxEntries` channels). */
  heardSince(channel: string, since: number): boolean;
}

export interface CachedGoneChannels extends GoneChannels, GoneNews {
  /** Resolves once the subscription is live (it starts with the first lookup). */
  ready(): Promise<void>;
  /** Ends the subscription (idempotent). */
  close(): Promise<void>;
}

/**
 * The worker's view of the gone marks (gone-channels.ts), asked before every agent call and every
 * working reaction: served from memory (src/announced-marks.ts), so a message in a channel that
 * is not gone costs no Redis round trip. Each mark and clear is announced on pub/sub in the same
 * step as it is written, and the entry dropped here when the news arrives: a channel archived
 * while its message waits is seen as such by the time the worker takes the message (Redis writes
 * the news to this subscription before it answers the ingress, whose ack Slack waits for).
 *
 * The subscription (one more connection) is opened by the first lookup, so a process that never
 * asks (an ingress-only one) never opens it.
 */
export function createCachedGoneChannels(redis: Redis, config: Readonly<Config>, options: GoneCacheOptions = {}): CachedGoneChannels {
  const maxEntries = options.maxEntries ?? 10_000;
  // Each channel's latest announcement (its point in the news), the oldest forgotten first.
  let heard = 0;
  const lastNews = new Map<string, number>();
  const onInvalidate = (channel: string | undefined) => {
    if (channel !== undefined) {
      lastNews.delete(channel);
      if (lastNews.size >= maxEntries) lastNews.delete(lastNews.keys().next().value!);
      lastNews.set(channel, ++heard);
    }
    options.onInvalidate?.(channel);
  };
  const marks = createAnnouncedMarks({
    redis,
    key: (channel) => goneKey(config, channel),
    channel: goneChangedChannel(config),
    connectionName: `${goneChangedChannel(config)}:cache`,
    what: 'Slack gone-channel cache',
    logger: options.logger,
    maxEntries,
    onInvalidate,
  });
  const store = createGoneChannels(redis, config, marks.write);
  return {
    get: async (channel) => asCode(await marks.get(channel)),
    // Written with the cache's writer: announced in the same MULTI, and dropped here at once.
    mark: (channel, code) => store.mark(channel, code),
    clear: (channel) => store.clear(channel),
    news: () => heard,
    heardSince: (channel, since) => (lastNews.get(channel) ?? 0) > since,
    ready: () => marks.ready(),
    close: () => marks.close(),
  };
}
