import { afterEach } from 'vitest';

/** Anything a test opens and must close: a pipeline, a Slack or Discord harness. */
export interface Closable {
  close(): Promise<unknown>;
}

/**
 * Registers an `afterEach` that closes, in the order they were opened, whatever the test
 * passed through the returned function (which hands it back). Register it after any other
 * `afterEach` of the file that must see things closed (hooks run last-registered first).
 */
export function closeAfterEach(): <T extends Closable>(opened: T) => T {
  const open: Closable[] = [];
  afterEach(async () => {
    for (const o of open.splice(0)) await o.close();
  });
  return (opened) => {
    open.push(opened);
    return opened;
  };
}
