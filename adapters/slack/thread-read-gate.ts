import type { Redis } from 'ioredis';
import { PlatformError } from '../../src/core/errors.js';

/**
 * Slack limits `conversations.replies` per workspace (apps outside the Marketplace: one call a
 * minute). After one read is refused, every other read of that workspace, on any worker, waits
 * out the same Retry-After without asking: a burst of threaded questions would otherwise each
 * send Slack a refused call on every retry.
 */
export interface ThreadReadGate {
  /** Throws Slack's 429, with the time left, while the workspace's reads are refused. */
  check(installation: string | undefined): Promise<void>;
  /** Slack refused a read: the workspace's reads wait `ms`. */
  close(installation: string | undefined, ms: number): Promise<void>;
}

export function createThreadReadGate(redis: Redis, prefix: string): ThreadReadGate {
  // One workspace per token without "Add to Slack".
  const key = (installation: string | undefined) => `${prefix}:slack:thread-reads-limited:${installation ?? 'token'}`;
  return {
    async check(installation) {
      const left = await redis.pttl(key(installation));
      if (left > 0) throw new PlatformError('slack', 'rate_limited', 'Slack is rate limiting reading threads here', { status: 429, retryAfterMs: left });
    },
    async close(installation, ms) {
      await redis.set(key(installation), '1', 'PX', Math.max(1, Math.round(ms)));
    },
  };
}
