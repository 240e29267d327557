import { withTimeout } from '../core/with-timeout.js';
import { BridgeError } from '../core/errors.js';

/** Capitalised, with a full stop. */
export function sentence(text: string): string {
  const t = text.trim();
  return `${t.charAt(0).toUpperCase()}${t.slice(1)}${/[.!?]$/.test(t) ? '' : '.'}`;
}

/** `promise`, or a timeout BridgeError naming `what` when it takes longer than `ms` (commands' probes). */
export function probeWithin<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return withTimeout(promise, ms, () => {
    throw new BridgeError('agent', 'timeout', `${what} took longer than ${ms} ms`);
  });
}
