import { randomBytes } from 'node:crypto';

/**
 * A short reference a user can read out and an operator finds in the log line, e.g. `R7K2QX`:
 * the one format of every reference the bridge shows (failed replies, commands, forms). No
 * 0/O or 1/I, so it survives being typed from a screenshot.
 */
export function newReference(): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  return Array.from(randomBytes(6), (b) => alphabet[b % alphabet.length]).join('');
}
