/**
 * Records unhandled rejections and uncaught exceptions of the test process, so a suite can
 * assert that none happened while it ran (vitest would otherwise report them only at the end).
 */
export function watchProcessErrors(): { errors: string[]; stop(): void } {
  const errors: string[] = [];
  const onRejection = (reason: unknown) => errors.push(`unhandledRejection: ${describe(reason)}`);
  const onException = (err: unknown) => errors.push(`uncaughtException: ${describe(err)}`);
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  return {
    errors,
    stop() {
      process.off('unhandledRejection', onRejection);
      process.off('uncaughtException', onException);
    },
  };
}

function describe(value: unknown): string {
  return value instanceof Error ? `${value.name}: ${value.message}\n${value.stack ?? ''}` : String(value);
}

/** Polls until `predicate` returns a truthy value. */
export async function until<T>(predicate: () => T | undefined | null | false | Promise<T | undefined | null | false>, label: string, timeoutMs = 15_000, stepMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${label}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/**
 * Waits until `count()` reaches `total`, for as long as it keeps growing: it gives up only when
 * the count has not moved for `stallMs`. A load test then holds on a busy shared machine (slow
 * but moving) and still fails fast when the pipeline is stuck.
 */
export async function untilProgress(count: () => number, total: number, label: string, stallMs = 30_000, stepMs = 250): Promise<void> {
  let last = -1;
  let movedAt = Date.now();
  for (;;) {
    const n = count();
    if (n >= total) return;
    if (n !== last) {
      last = n;
      movedAt = Date.now();
    } else if (Date.now() - movedAt > stallMs) {
      throw new Error(`${label}: no progress for ${stallMs} ms at ${n} of ${total}`);
    }
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Runs `fn` over `items` with at most `limit` at a time, keeping each item's own order of calls. */
export async function pool<T>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i]!, i);
    }
  });
  await Promise.all(runners);
}
