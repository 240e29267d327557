import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';

/** Discord lets `max_concurrency` shards IDENTIFY per 5-second window, one per rate-limit key. */
export const IDENTIFY_WINDOW_MS = 5_000;
/** The IDENTIFY is sent a little after the key is taken (connect, HELLO): hold the key that much longer. */
const SEND_MARGIN_MS = 500;

/** What @discordjs/ws asks of an identify throttler (`ws.buildIdentifyThrottler`). */
export interface IdentifyThrottler {
  waitForIdentify(shardId: number, signal: AbortSignal): Promise<void>;
}

/**
 * Identify throttling shared by every ingress process through Redis. discord.js's own throttler
 * paces the shards of one process; with shards spread over processes, two of them could identify
 * shards with the same rate-limit key (`shard_id % max_concurrency`) in one window and Discord
 * would refuse one. Each key is a Redis key held for 5 s by whoever identified last
 * (`SET NX PX`): a shard waits until its key is free, whichever process holds it.
 */
export class RedisIdentifyThrottler implements IdentifyThrottler {
  constructor(
    private readonly redis: Pick<Redis, 'set' | 'pttl'>,
    private readonly keyPrefix: string,
    private readonly maxConcurrency: number,
    private readonly windowMs = IDENTIFY_WINDOW_MS + SEND_MARGIN_MS,
  ) {}

  async waitForIdentify(shardId: number, signal: AbortSignal): Promise<void> {
    const key = `${this.keyPrefix}:${shardId % Math.max(1, this.maxConcurrency)}`;
    for (;;) {
      signal.throwIfAborted();
      if ((await this.redis.set(key, String(shardId), 'PX', this.windowMs, 'NX')) === 'OK') return;
      const left = await this.redis.pttl(key);
      // Jitter keeps several waiting processes from all trying at the same millisecond.
      await sleep(Math.max(20, left) + Math.random() * 100, undefined, { signal });
    }
  }
}
