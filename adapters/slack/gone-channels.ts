import type { Redis } from 'ioredis';
import { writeAnnounced, type MarkWriter } from '../../src/announced-marks.js';
import type { Config } from '../../src/config/load.js';
import { bullPrefix } from '../../src/redis.js';

/** What Slack would answer a post there: the bot removed, the channel archived, or deleted. */
export type GoneCode = 'not_in_channel' | 'is_archived' | 'channel_not_found';

/**
 * Channels Slack told the ingress (by an event) the bot can no longer post in, shared in Redis
 * with every worker: a message queued there is given up before its (billed) agent call, even on
 * a worker that never met Slack's refusal itself. A mark is only a hint: the worker confirms it
 * with `conversations.info` (post-readiness.ts), so a missed "invited back" event never keeps a
 * channel silent. Marks lapse after `TTL_S`; a channel gone longer is found again by its refusal.
 */
export interface GoneChannels {
  /** Returns whether the channel was already marked so (Slack sends two events for a removal). */
  mark(channel: string, code: GoneCode): Promise<boolean>;
  clear(channel: string): Promise<void>;
  get(channel: string): Promise<GoneCode | undefined>;
}

/** What happened, in words (logs, the failure log). */
export const GONE_WORDS: Readonly<Record<GoneCode, string>> = {
  is_archived: 'the channel was archived',
  channel_not_found: 'the channel was deleted',
  not_in_channel: 'the bot was removed from the channel',
};

const TTL_S = 30 * 24 * 3600;
const CODES: ReadonlySet<string> = new Set<GoneCode>(['not_in_channel', 'is_archived', 'channel_not_found']);
export const asCode = (code: unknown): GoneCode | undefined => (typeof code === 'string' && CODES.has(code) ? (code as GoneCode) : undefined);

export const goneKey = (config: Readonly<Config>, channel: string) => `${bullPrefix(config)}:slack:channel-gone:${channel}`;
/** Where each mark and clear is announced (the channel's ID), for the workers' caches (gone-cache.ts). */
export const goneChangedChannel = (config: Readonly<Config>) => `${bullPrefix(config)}:slack:channels-gone:changed`;

/**
 * The marks in Redis. A mark and a clear are announced in the same step as they are written, so
 * a worker's cache (gone-cache.ts) never holds one longer than its announcement takes to arrive.
 * `write` is the cache's when it writes (it drops its own entry at once as well).
 */
export function createGoneChannels(redis: Redis, config: Readonly<Config>, write: MarkWriter = writeAnnounced(redis, goneChangedChannel(config))): GoneChannels {
  const key = (channel: string) => goneKey(config, channel);
  return {
    mark: async (channel, code) => {
      const [previous] = await write([channel], (m) => m.set(key(channel), code, 'EX', TTL_S, 'GET'));
      return previous === code;
    },
    clear: async (channel) => void (await write([channel], (m) => m.del(key(channel)))),
    get: async (channel) => asCode(await redis.get(key(channel))),
  };
}
