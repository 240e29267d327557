import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Deadline } from '../../src/agent-api/deadline.js';

const deadline = (...args: ConstructorParameters<typeof Deadline>) => new Deadline(...args);

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('deadline', () => {
  it('without a wait limit, the call limit runs from the start', () => {
    const d = deadline(1_000);
    vi.advanceTimersByTime(999);
    expect(d.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(d.timedOut).toBe('call');
    expect((d.signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('with a wait limit, the call limit starts at dispatch, however long the wait was', () => {
    const d = deadline(1_000, undefined, { waitLimitMs: 5_000 });
    vi.advanceTimersByTime(4_000); // queued behind other calls
    expect(d.signal.aborted).toBe(false);
    d.dispatched();
    vi.advanceTimersByTime(999);
    expect(d.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(d.timedOut).toBe('call');
    d.dispose();
  });

  it('the wait for a connection is bounded on its own', () => {
    const d = deadline(60_000, undefined, { waitLimitMs: 200 });
    vi.advanceTimersByTime(200);
    expect(d.timedOut).toBe('wait');
    d.dispatched(); // too late: stays aborted as a wait timeout
    expect(d.timedOut).toBe('wait');
  });

  it("the caller's abort passes through; thousands of calls on one caller signal raise no leak warning", async () => {
    const warn = vi.fn();
    process.on('warning', warn);
    const caller = new AbortController();
    const calls = Array.from({ length: 2_000 }, () => deadline(1_000, caller.signal));
    caller.abort(new Error('shutting down'));
    expect(calls.every((d) => d.signal.aborted && (d.signal.reason as Error).message === 'shutting down')).toBe(true);
    expect(calls[0]!.timedOut).toBeUndefined();
    for (const d of calls) d.dispose();
    await new Promise<void>((resolve) => process.nextTick(resolve)); // warnings are emitted on the next tick
    process.off('warning', warn);
    expect(warn).not.toHaveBeenCalled();
  });

  it('dispose takes its listener off the caller signal and stops its timer', () => {
    const caller = new AbortController();
    const calls = Array.from({ length: 3 }, () => deadline(1_000, caller.signal));
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(3);
    for (const d of calls) d.dispose();
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    vi.advanceTimersByTime(5_000);
    expect(calls.every((d) => !d.signal.aborted && d.timedOut === undefined)).toBe(true);
    caller.abort(new Error('late'));
    expect(calls.some((d) => d.signal.aborted)).toBe(false);
  });
});
