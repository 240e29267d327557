/** Polls until `predicate` returns a truthy value (for state no emulator event announces, such as log lines). */
export async function until<T>(predicate: () => T | undefined | null | false | Promise<T | undefined | null | false>, label: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${label}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
