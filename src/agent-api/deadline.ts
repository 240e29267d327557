/** One call's abort signal: the caller's signal combined with the call's time limit. */
export interface Deadline {
  readonly signal: AbortSignal;
  /** True once the time limit (not the caller) ended the call. */
  readonly timedOut: boolean;
  /** Clears the timer and the listener on the caller's signal. Call it when the call settles. */
  dispose(): void;
}

/**
 * Not AbortSignal.any: on Node 20 every combined signal stays referenced by a long-lived
 * source (a worker's shutdown signal passed to each call) until that source aborts, which
 * leaks one signal per call (nodejs/node#55351). A listener removed in dispose() does not.
 */
export function deadline(timeoutMs: number, caller?: AbortSignal): Deadline {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError'));
  }, timeoutMs);
  const onAbort = () => controller.abort(caller?.reason);
  if (caller?.aborted) onAbort();
  else caller?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    dispose() {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onAbort);
    },
  };
}
