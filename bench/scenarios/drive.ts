import { now, sleep } from '../lib/clock.js';
import { collectPosts, waitForPosts, type BenchContext } from './context.js';
import type { GenericPath } from './paths.js';

/** Sends `count` messages with at most `window` in flight; returns messages per second. */
export async function sendMany(count: number, window: number, send: (i: number) => Promise<void>): Promise<number> {
  const started = now();
  let next = 0;
  const lane = async () => {
    while (next < count) await send(next++);
  };
  await Promise.all(Array.from({ length: Math.min(window, count) }, lane));
  return count / ((now() - started) / 1000);
}

/**
 * Open-loop arrivals: message i is due at `start + i / rate` and is sent when due, whatever
 * happened to earlier ones (no waiting for replies). `send` gets the due time, so latency
 * counts from when the message should have gone, and a lagging sender shows up in it.
 */
export async function openLoop(
  rate: number,
  durationMs: number,
  send: (i: number, dueAt: number) => Promise<void>,
): Promise<{ sent: number; failed: number; firstError?: string; maxLagMs: number }> {
  const total = Math.round((rate * durationMs) / 1000);
  const interval = 1000 / rate;
  const start = now();
  const inflight: Promise<void>[] = [];
  let failed = 0;
  let firstError: string | undefined;
  let maxLagMs = 0;
  let i = 0;
  while (i < total) {
    const t = now();
    const due = Math.min(total, Math.floor((t - start) / interval) + 1);
    for (; i < due; i++) {
      const dueAt = start + i * interval;
      maxLagMs = Math.max(maxLagMs, t - dueAt);
      inflight.push(
        send(i, dueAt).catch((err: unknown) => {
          failed++;
          firstError ??= err instanceof Error ? err.message : String(err);
        }),
      );
    }
    await sleep(1);
  }
  await Promise.all(inflight);
  return { sent: total, failed, firstError, maxLagMs };
}

/** Drains `count` messages through a running path and throws the replies away (JIT, pools, Redis scripts). */
export async function warmUp(ctx: BenchContext, path: GenericPath, count: number, tag: string): Promise<void> {
  await collectPosts(ctx);
  await sendMany(count, 64, (i) => path.send(`${tag}-${i}`, `${tag}-${i}`, `warm-up ${i}`));
  await waitForPosts(ctx, count, 60_000 + count * 5);
  await collectPosts(ctx);
}
