import type { Redis } from 'ioredis';
import type { Logger } from '../../src/logger.js';

/**
 * The shard count of a fleet of ingress processes that split the shards (DISCORD_SHARD_IDS),
 * agreed through Redis. Discord routes a guild to the session whose IDENTIFY says
 * `(guild_id >> 22) % count == id` and never checks that one bot's sessions agree on `count`:
 * processes that read `auto` from Discord at different times (its recommendation grows with the
 * guilds) would leave some guilds with no session, unanswered and unlogged. So the first process
 * to resolve the count records it, and every later one uses the recorded count.
 *
 * The record is a lease that the running processes renew: once the whole fleet is gone it
 * lapses, so a later fleet (another shard plan, a test run) is never bound by a stale count.
 */
export interface ShardCountAgreement {
  redis: Pick<Redis, 'set' | 'get' | 'pexpire'>;
  /** `<QUEUE_PREFIX>:discord:shard-count`. */
  key: string;
  /** DISCORD_SHARD_COUNT: a number, or 'auto' for Discord's recommendation. */
  configured: number | 'auto';
  /** DISCORD_SHARD_IDS: a recorded count that cannot hold them belongs to another plan. */
  ids: readonly number[];
  /** Discord's recommended count (`GET /gateway/bot`), asked only for 'auto'. */
  recommended: () => Promise<number>;
  logger: Pick<Logger, 'warn' | 'error'>;
  /** @defaultValue {@link SHARD_COUNT_LEASE_MS} */
  leaseMs?: number;
}

/** How long the record outlives the last process that renews it. */
export const SHARD_COUNT_LEASE_MS = 60_000;

/** The count this process identifies with, and the renewal of the record (stop it with the adapter). */
export async function agreeShardCount(a: ShardCountAgreement): Promise<{ count: number; stopRenewing: () => void }> {
  const leaseMs = a.leaseMs ?? SHARD_COUNT_LEASE_MS;
  const count = a.configured === 'auto' ? await agreeAuto(a, leaseMs) : await recordExplicit(a, a.configured, leaseMs);
  const timer = setInterval(() => void renew(a, count, leaseMs).catch(() => {}), Math.max(1, Math.floor(leaseMs / 3)));
  timer.unref();
  return { count, stopRenewing: () => clearInterval(timer) };
}

/** Keeps the record alive; puts it back if it lapsed (Redis restarted, a long pause). */
async function renew(a: ShardCountAgreement, count: number, leaseMs: number): Promise<void> {
  if ((await a.redis.set(a.key, String(count), 'PX', leaseMs, 'NX')) === 'OK') return;
  await a.redis.pexpire(a.key, leaseMs);
}

async function agreeAuto(a: ShardCountAgreement, leaseMs: number): Promise<number> {
  const recommended = await a.recommended();
  if ((await a.redis.set(a.key, String(recommended), 'PX', leaseMs, 'NX')) === 'OK') return recommended;
  const recorded = Number(await a.redis.get(a.key));
  // Gone or garbled meanwhile, or too small for this process's IDs (left by another plan):
  // this process's count becomes the record.
  const fits = Number.isInteger(recorded) && recorded >= 1 && a.ids.every((id) => id < recorded);
  if (!fits) {
    if (Number.isInteger(recorded) && recorded >= 1) {
      a.logger.warn(
        { recordedShardCount: recorded, recommendedShardCount: recommended, key: a.key },
        `discord: the shard count recorded by other processes of this bridge (${recorded}) cannot hold DISCORD_SHARD_IDS ${a.ids.join(',')}; ` +
          `using Discord's recommendation (${recommended}). Set the same DISCORD_SHARD_COUNT in every process`,
      );
    }
    await a.redis.set(a.key, String(recommended), 'PX', leaseMs);
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
async function recordExplicit(a: ShardCountAgreement, count: number, leaseMs: number): Promise<number> {
  const previous = await a.redis.set(a.key, String(count), 'PX', leaseMs, 'GET');
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
