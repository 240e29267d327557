/** An 'abort' listener: a function, or an object whose handleEvent runs (as with EventTarget). */
export type AbortListener = (() => void) | { handleEvent(): void };

/**
 * One agent call's abort signal, as the lean fetch (src/undici-fetch.ts) and the pool's
 * TrackedCall read one: `aborted`, `reason`, and 'abort' listeners added and removed.
 *
 * Not an AbortController: on Node 20 every AbortSignal is an EventTarget with a V8 hidden class
 * of its own, and with its listeners (the call's handler, the pool's TrackedCall) it kept
 * each call's request objects alive through the young-generation collector. At 1,000 calls/s
 * per worker they were two thirds of what every scavenge copied and promoted (716 KB → 224 KB
 * without them), and the cause of its pauses over 3 ms. Only for undici: the global `fetch`
 * needs a real AbortSignal (see Deadline).
 */
export class CallSignal {
  aborted = false;
  reason: unknown = undefined;
  /** Usually one or two (undici's handler, the pool's): an array, not a Set. */
  private listeners: AbortListener[] = [];

  /** The signal itself: Deadline treats this and an AbortController alike. */
  get signal(): CallSignal {
    return this;
  }

  addEventListener(type: string, listener: AbortListener): void {
    if (type !== 'abort' || this.aborted || this.listeners.includes(listener)) return;
    this.listeners.push(listener);
  }

  removeEventListener(type: string, listener: AbortListener): void {
    if (type !== 'abort') return;
    const i = this.listeners.indexOf(listener);
    if (i >= 0) this.listeners.splice(i, 1);
  }

  /**
   * Aborts once; each listener runs once, in the order added. A listener that throws is
   * reported as uncaught, as EventTarget reports it, and does not stop the others.
   */
  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason ?? new DOMException('This operation was aborted', 'AbortError');
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) {
      try {
        if (typeof listener === 'function') listener();
        else listener.handleEvent();
      } catch (err) {
        process.nextTick(() => {
          throw err;
        });
      }
    }
  }
}
