/**
 * Waits for a cache's news from Redis (its `onInvalidate` hook): `invalidated(name)` resolves
 * when the entry `name`, or with undefined the whole cache, was dropped on an announcement.
 */
export function invalidations() {
  const waiters: Array<{ name: string | undefined; resolve: () => void }> = [];
  return {
    onInvalidate: (name: string | undefined) => {
      for (const w of waiters.filter((w) => w.name === name)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    },
    invalidated: (name: string | undefined) => new Promise<void>((resolve) => waiters.push({ name, resolve })),
  };
}
