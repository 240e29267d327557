import type { Redis } from 'ioredis';
import type { Logger } from '../../src/logger.js';

/**
 * The shard count of a fleet of ingress processes that split the shards (DISCORD_SHARD_IDS),
 * agreed through Redis. Discord routes a guild to the session whose IDENTIFY says
 * `(guild_id >> 22) % count == id` and never checks that one bot's sessions agree on `count`:
 * processes that read `auto` from Discord at different times (its recommendation grows with the
 * guilds) would leave some guilds with no session, unanswered and unlogged. So the first process
 * to resolve the count records it, and every later one uses the recorded count.
 */
export interface ShardCountAgreement {
  redis: Pick<Redis, 'set' | 'get'>;
  /** `<QUEUE_PREFIX>:discord:shard-count`. */
  key: string;
  /** DISCORD_SHARD_COUNT: a number, or 'auto' for Discord's recommendation. */
  configured: number | 'auto';
  /** Discord's recommended count (`GET /gateway/bot`), asked only for 'auto'. */
  recommended: () => Promise<number>;
  logger: Pick<Logger, 'warn' | 'error'>;
}

/** The count this process identifies with. */
export async function agreeShardCount(a: ShardCountAgreement): Promise<number> {
  if (a.configured !== 'auto') return recordExplicit(a, a.configured);
  const recommended = await a.recommended();
  if ((await a.redis.set(a.key, String(recommended), 'NX')) === 'OK') return recommended;
  const recorded = Number(await a.redis.get(a.key));
  // Gone or garbled meanwhile (an operator cleared it): this process's count becomes the record.
  if (!Number.isInteger(recorded) || recorded < 1) {
    await a.redis.set(a.key, String(recommended));
    return recommended;
  }
  if (recorded !== recommended) {
    a.logger.warn(
      { recordedShardCount: recorded, recommendedShardCount: recommended, key: a.key },
      `discord: Discord now recommends ${recommended} shards, but the processes of this bridge agreed on ${recorded} ` +
        `(recorded in Redis by the first to start), so this one uses ${recorded} too: processes with different counts leave guilds unanswered. ` +
        `To change the count, set DISCORD_SHARD_COUNT=${recommended} in every process (with DISCORD_SHARD_IDS covering 0-${recommended - 1}) and restart them all`,
    );
  }
  return recorded;
}

/** An explicit count wins and becomes the record; a different recorded one means processes may disagree. */
async function recordExplicit(a: ShardCountAgreement, count: number): Promise<number> {
  const previous = await a.redis.set(a.key, String(count), 'GET');
  const recorded = previous === null ? undefined : Number(previous);
  if (recorded !== undefined && recorded !== count) {
    a.logger.error(
      { shardCount: count, recordedShardCount: recorded, key: a.key },
      `discord: DISCORD_SHARD_COUNT is ${count} but the other processes of this bridge recorded ${recorded} shards: ` +
        `while processes run with different counts some guilds are never answered. Set the same DISCORD_SHARD_COUNT in every process and restart those still on ${recorded}`,
    );
  }
  return count;
}
