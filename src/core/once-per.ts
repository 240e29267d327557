/** Keys remembered at most; past that the memory starts afresh (a line may then repeat early). */
const MAX_KEYS = 10_000;

/**
 * True the first time a key is seen in each `windowMs`, false otherwise: for a log line that
 * names a lasting problem (a channel the bot may not post in, a workspace to reinstall) once in
 * a while instead of once per message.
 */
export function oncePer(windowMs: number, now: () => number = Date.now): (key: string) => boolean {
  const lastAt = new Map<string, number>();
  return (key) => {
    const at = now();
    if (at - (lastAt.get(key) ?? -Infinity) < windowMs) return false;
    if (lastAt.size >= MAX_KEYS) lastAt.clear();
    lastAt.set(key, at);
    return true;
  };
}
