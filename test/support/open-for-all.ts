import { afterAll, beforeAll } from 'vitest';
import type { Closable } from './close-after-each.js';

/**
 * Registers a `beforeAll` that opens, with `open`, what the suite's tests share (a Slack harness,
 * a playground), and an `afterAll` that closes it; nothing is closed when opening failed. `open`
 * usually also hands what it opened to the suite: `openForAll(async () => (h = await start()))`.
 */
export function openForAll(open: () => Promise<Closable>): void {
  let opened: Closable | undefined;
  beforeAll(async () => {
    opened = await open();
  });
  afterAll(async () => {
    await opened?.close();
  });
}
