import type { Redis } from 'ioredis';

/** A measure whose round trip took longer is not trusted over a recent quicker one. */
const SLOW_MEASURE_MS = 200;
/** How long a quick measure is kept over slow ones. */
const KEEP_QUICK_MEASURE_MS = 60_000;
/** How soon a first measure that failed is tried again. */
const FIRST_MEASURE_RETRY_MS = 1_000;

/** Redis's time as this process knows it without a round trip (redis-time-backend.ts). */
export interface RedisTimeSource {
  /** Settled once the first measure has come back (or failed): wait for it before the first use. */
  readonly ready: Promise<void>;
  /** How far Redis's clock is ahead of this process's `Date.now()` (negative: behind). */
  offsetMs(): number;
}

/** Redis's TIME (ms) on the node that holds `key` (in a Cluster, another node's clock may differ). */
export async function redisTimeMsAt(client: Redis, key: string): Promise<number> {
  const [seconds, micros] = (await client.eval("return redis.call('TIME')", 1, key)) as [string, string];
  return Number(seconds) * 1000 + Number(micros) / 1000;
}

/**
 * Redis's clock estimated in-process: measured every `refreshMs` off any message's path, and
 * carried between measures by this process's monotonic clock, so a step of its wall clock (a VM
 * resumed from pause, NTP correcting it) counts only from the next measure. Until a first
 * measure succeeds (tried every second) it is this process's own clock (offset 0); a failed one
 * keeps the last.
 */
export class RedisTimeEstimate implements RedisTimeSource {
  readonly ready: Promise<void>;
  /** Redis's time at a moment of `performance.now()`. */
  private base: { redisMs: number; at: number } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly measure: () => Promise<number>,
    private readonly options: { refreshMs?: number; onError?: (err: unknown) => void } = {},
  ) {
    this.ready = this.tick();
  }

  offsetMs(): number {
    if (!this.base) return 0;
    return this.base.redisMs + (performance.now() - this.base.at) - Date.now();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** Measures, then schedules the next measure: soon while none has succeeded yet. */
  private async tick(): Promise<void> {
    try {
      await this.refresh();
    } catch (err) {
      this.options.onError?.(err);
    }
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), this.base ? (this.options.refreshMs ?? 10_000) : FIRST_MEASURE_RETRY_MS);
    this.timer.unref();
  }

  private async refresh(): Promise<void> {
    const sentAt = performance.now();
    const redisMs = await this.measure();
    const at = performance.now();
    // A slow answer (Redis busy) says little: a recent measure from a quick one is kept.
    if (this.base && at - sentAt > SLOW_MEASURE_MS && at - this.base.at < KEEP_QUICK_MEASURE_MS) return;
    // TIME was read somewhere within the round trip: its middle is the best guess (±half of it).
    this.base = { redisMs: redisMs + (at - sentAt) / 2, at };
  }
}
