import type { Redis } from 'ioredis';
import { withTimeout } from '../../src/core/with-timeout.js';

/**
 * A form's submission is acted on once: the same view delivered twice (a redelivery, a second
 * replica, a double click) must not add a credential twice. A claim names the view only (never
 * what was typed), lasts as long as a view can be sent, and is given back when the submission
 * did not succeed, so a form Slack showed an error on can be corrected and sent again.
 */
export interface ViewClaims {
  /** True when this submission is the one to act on. A Redis that does not answer (in 0.5 s) does not stop it. */
  claim(viewId: string): Promise<boolean>;
  release(viewId: string): Promise<void>;
}

/** How long a claim stands: past Slack's life of an open modal's submission. */
const CLAIM_MS = 60 * 60_000;
/** How long a submission waits for Redis to take its claim. */
const CLAIM_WAIT_MS = 500;

export function createViewClaims(redis: Redis, prefix: string): ViewClaims {
  const key = (viewId: string) => `${prefix}:slack:view-submitted:${viewId.slice(0, 64)}`;
  return {
    async claim(viewId) {
      if (!viewId) return true;
      try {
        // Inside Slack's 3 s for the answer: a Redis that does not say at once does not stop it.
        return (await withTimeout(redis.set(key(viewId), '1', 'PX', CLAIM_MS, 'NX'), CLAIM_WAIT_MS, () => 'OK' as const)) === 'OK';
      } catch {
        return true;
      }
    },
    async release(viewId) {
      if (!viewId) return;
      await redis.del(key(viewId)).catch(() => undefined);
    },
  };
}
