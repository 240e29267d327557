import { setMaxListeners } from 'node:events';
import { CallSignal } from './call-signal.js';

export interface DeadlineOptions {
  /**
   * Bound on the wait for a connection; the call's limit then starts at {@link Deadline.dispatched}.
   * Unset: the call's limit starts at once (a transport that cannot report dispatch).
   */
  waitLimitMs?: number;
  /**
   * The call goes through the lean fetch on the agent pool, which takes any signal with
   * `addEventListener`: a {@link CallSignal} then replaces the AbortController. Unset: a real
   * AbortSignal (a `fetch` passed in by a test needs one).
   */
  forUndici?: boolean;
}

/**
 * Not AbortSignal.any: on Node 20 every combined signal stays referenced by a long-lived
 * source (a worker's shutdown signal passed to each call) until that source aborts, which
 * leaks one signal per call (nodejs/node#55351). A listener removed in dispose() does not.
 */
const unbounded = new WeakSet<AbortSignal>();

/**
 * One call's abort signal: the caller's signal combined with the call's time limits.
 * A class with no closures (the caller's abort reaches {@link handleEvent}, the timer gets the
 * instance as its argument): one is made per agent call, and thousands may be in flight.
 */
export class Deadline {
  private readonly controller: AbortController | CallSignal;
  private timedOutBy: 'wait' | 'call' | undefined;
  private phase: 'wait' | 'call';
  private timer: NodeJS.Timeout | undefined;
  private timerMs = 0;
  private waiting: boolean;

  constructor(
    private readonly timeoutMs: number,
    private readonly caller?: AbortSignal,
    options: DeadlineOptions = {},
  ) {
    this.controller = options.forUndici ? new CallSignal() : new AbortController();
    this.waiting = options.waitLimitMs !== undefined;
    this.phase = this.waiting ? 'wait' : 'call';
    this.start(options.waitLimitMs ?? timeoutMs);
    if (caller?.aborted) this.handleEvent();
    else if (caller) {
      // A worker passes one shutdown signal to all its calls (thousands with a slow agent): one
      // listener per call, each removed in dispose(), is expected, not Node's "possible leak".
      if (!unbounded.has(caller)) {
        setMaxListeners(0, caller);
        unbounded.add(caller);
      }
      caller.addEventListener('abort', this, { once: true });
    }
  }

  /** For the agent pool's lean fetch, a {@link CallSignal} typed as the AbortSignal `fetch`'s init names. */
  get signal(): AbortSignal {
    return this.controller.signal as AbortSignal;
  }

  /** Which limit (not the caller) ended the call: the wait for a connection, or the call itself. */
  get timedOut(): 'wait' | 'call' | undefined {
    return this.timedOutBy;
  }

  /** The request got a connection and was written: the call's own limit starts now. */
  dispatched(): void {
    if (!this.waiting || this.controller.signal.aborted) return;
    this.waiting = false;
    this.phase = 'call';
    this.start(this.timeoutMs);
  }

  /** Clears the timer and the listener on the caller's signal. Call it when the call settles. */
  dispose(): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener('abort', this);
  }

  /** The caller's signal aborted (this object is its listener). */
  handleEvent(): void {
    this.controller.abort(this.caller?.reason);
  }

  private start(ms: number): void {
    // The same length again (the usual case: the wait is bounded by the call's own limit)
    // restarts the one timer instead of making another: one timer per call, not two.
    if (this.timer && ms === this.timerMs) this.timer.refresh();
    else {
      clearTimeout(this.timer);
      this.timer = setTimeout(Deadline.expire, ms, this);
    }
    this.timerMs = ms;
  }

  /** The timer's end: the limit of the current phase passed. */
  private static expire(d: Deadline): void {
    d.timedOutBy = d.phase;
    const what = d.phase === 'wait' ? 'no connection' : 'no answer';
    d.controller.abort(new DOMException(`${what} within ${d.timerMs} ms`, 'TimeoutError'));
  }
}
