import { setMaxListeners } from 'node:events';

/** One call's abort signal: the caller's signal combined with the call's time limits. */
export interface Deadline {
  readonly signal: AbortSignal;
  /** Which limit (not the caller) ended the call: the wait for a connection, or the call itself. */
  readonly timedOut: 'wait' | 'call' | undefined;
  /** The request got a connection and was written: the call's own limit starts now. */
  dispatched(): void;
  /** Clears the timers and the listener on the caller's signal. Call it when the call settles. */
  dispose(): void;
}

export interface DeadlineOptions {
  /**
   * Bound on the wait for a connection; the call's limit then starts at {@link Deadline.dispatched}.
   * Unset: the call's limit starts at once (a transport that cannot report dispatch).
   */
  waitLimitMs?: number;
}

/**
 * Not AbortSignal.any: on Node 20 every combined signal stays referenced by a long-lived
 * source (a worker's shutdown signal passed to each call) until that source aborts, which
 * leaks one signal per call (nodejs/node#55351). A listener removed in dispose() does not.
 */
const unbounded = new WeakSet<AbortSignal>();

export function deadline(timeoutMs: number, caller?: AbortSignal, options: DeadlineOptions = {}): Deadline {
  const controller = new AbortController();
  let timedOut: 'wait' | 'call' | undefined;
  let timer: NodeJS.Timeout | undefined;
  let phase: 'wait' | 'call';
  let timerMs: number;
  const expire = () => {
    timedOut = phase;
    const what = phase === 'wait' ? 'no connection' : 'no answer';
    controller.abort(new DOMException(`${what} within ${timerMs} ms`, 'TimeoutError'));
  };
  const start = (next: 'wait' | 'call', ms: number) => {
    phase = next;
    // The same length again (the usual case: the wait is bounded by the call's own limit)
    // restarts the one timer instead of making another: one timer per call, not two.
    if (timer && ms === timerMs) timer.refresh();
    else {
      clearTimeout(timer);
      timer = setTimeout(expire, ms);
    }
    timerMs = ms;
  };
  let waiting = options.waitLimitMs !== undefined;
  start(waiting ? 'wait' : 'call', options.waitLimitMs ?? timeoutMs);
  const onAbort = () => controller.abort(caller?.reason);
  if (caller?.aborted) onAbort();
  else if (caller) {
    // A worker passes one shutdown signal to all its calls (thousands with a slow agent): one
    // listener per call, each removed in dispose(), is expected, not Node's "possible leak".
    if (!unbounded.has(caller)) {
      setMaxListeners(0, caller);
      unbounded.add(caller);
    }
    caller.addEventListener('abort', onAbort, { once: true });
  }
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    dispatched() {
      if (!waiting || controller.signal.aborted) return;
      waiting = false;
      start('call', timeoutMs);
    },
    dispose() {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onAbort);
    },
  };
}
