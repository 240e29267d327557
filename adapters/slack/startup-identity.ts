import { PlatformError } from '../../src/core/errors.js';
import type { Logger } from '../../src/logger.js';

export interface StartupIdentityOptions {
  logger: Logger;
  /** How long start-up keeps asking before it gives up. @defaultValue 60000 */
  budgetMs?: number;
  /** True once the adapter is being stopped: no further attempt. */
  stopped?: () => boolean;
}

/** First wait after a 5xx or a network failure; doubled each time, at most 10 s. */
const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 10_000;

/** Failures a later attempt can fix: Slack busy (429), down (5xx), or not reached. */
const TRANSIENT = new Set(['rate_limited', 'server_error', 'network', 'timeout']);

/**
 * `auth.test` at start-up, asked again while Slack is busy or unreachable: a 429 waits its
 * Retry-After, a 5xx or a network failure backs off (1 s, 2 s, 4 s... at most 10 s), all within
 * `budgetMs`. A refused token (invalid_auth, not_authed, account_inactive, ...) fails at once.
 */
export async function identityAtStartUp<T>(identity: () => Promise<T>, options: StartupIdentityOptions): Promise<T> {
  const deadline = Date.now() + (options.budgetMs ?? 60_000);
  let backoff = FIRST_BACKOFF_MS;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await identity();
    } catch (err) {
      const kind = err instanceof PlatformError ? err.kind : undefined;
      if (!kind || !TRANSIENT.has(kind) || options.stopped?.()) throw err;
      const waitMs = kind === 'rate_limited' ? Math.max((err as PlatformError).retryAfterMs ?? FIRST_BACKOFF_MS, 100) : backoff;
      if (kind !== 'rate_limited') backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      if (Date.now() + waitMs > deadline) throw err;
      options.logger.warn({ attempt, waitMs, kind }, `Slack auth.test failed at start-up (${(err as Error).message}); asking again in ${Math.ceil(waitMs / 1000)} s`);
      await new Promise((r) => setTimeout(r, waitMs));
    }
  }
}
