/**
 * Settles as `promise` does, or, if it takes longer than `ms`, as `onTimeout` says: the error it
 * throws, or the value it returns. The timer never keeps the process alive, and is cleared as
 * soon as either side settles; a late rejection of `promise` is not reported as unhandled.
 */
export async function withTimeout<T, F = never>(promise: Promise<T>, ms: number, onTimeout: () => F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<F>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(onTimeout());
      } catch (err) {
        reject(err);
      }
    }, ms);
    timer.unref();
  });
  promise.catch(() => {});
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
