import type { Redis } from 'ioredis';
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

export function createGoneChannels(redis: Redis, config: Readonly<Config>): GoneChannels {
  const key = (channel: string) => `${bullPrefix(config)}:slack:channel-gone:${channel}`;
  return {
    mark: async (channel, code) => (await redis.set(key(channel), code, 'EX', TTL_S, 'GET')) === code,
    clear: async (channel) => void (await redis.del(key(channel))),
    get: async (channel) => {
      const code = await redis.get(key(channel));
      return code !== null && CODES.has(code) ? (code as GoneCode) : undefined;
    },
  };
}
