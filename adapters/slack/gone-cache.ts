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

export interface CachedGoneChannels extends GoneChannels {
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
  const marks = createAnnouncedMarks({
    redis,
    key: (channel) => goneKey(config, channel),
    channel: goneChangedChannel(config),
    connectionName: `${goneChangedChannel(config)}:cache`,
    what: 'Slack gone-channel cache',
    logger: options.logger,
    maxEntries: options.maxEntries,
    onInvalidate: options.onInvalidate,
  });
  const store = createGoneChannels(redis, config, marks.write);
  return {
    get: async (channel) => asCode(await marks.get(channel)),
    // Written with the cache's writer: announced in the same MULTI, and dropped here at once.
    mark: (channel, code) => store.mark(channel, code),
    clear: (channel) => store.clear(channel),
    ready: () => marks.ready(),
    close: () => marks.close(),
  };
}
