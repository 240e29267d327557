/**
 * Wall-clock milliseconds with sub-millisecond resolution. Every bench process uses this
 * clock; the driver corrects for the small offset between processes (see `Child.clockOffset`).
 */
export const now = (): number => performance.timeOrigin + performance.now();

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every `everyMs` until it returns a value, or throws after `timeoutMs`. */
export async function until<T>(
  check: () => Promise<T | undefined> | T | undefined,
  label: string,
  timeoutMs: number,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${label}`);
    await sleep(everyMs);
  }
}
