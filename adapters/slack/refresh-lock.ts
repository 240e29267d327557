import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Installation } from '@slack/bolt';
import type { Redis } from 'ioredis';
import { luaScript } from '../../src/queue/lua-script.js';

const releaseScript = luaScript('release-lock-1.lua');

/** InstallProvider's window (`detectExpiredOrExpiringTokens` in @slack/oauth 4): 2 hours. */
const EXPIRY_WINDOW_SECONDS = 7_200;

/**
 * InstallProvider's own rule: `authorize` refreshes a rotating token (one with a refresh token
 * and an expiry) that expires within 2 hours, bot or user. Seconds, rounded down, as it counts.
 */
export function needsRefresh(i: Installation, nowSeconds = Math.floor(Date.now() / 1000)): boolean {
  const expiring = (t: { refreshToken?: string | undefined; expiresAt?: number | undefined } | undefined) =>
    Boolean(t?.refreshToken) && typeof t?.expiresAt === 'number' && t.expiresAt - nowSeconds <= EXPIRY_WINDOW_SECONDS;
  return expiring(i.bot) || expiring(i.user);
}

export interface RefreshLockOptions {
  /** How long a taker may take to refresh and save before the lock lapses (a crashed taker). @defaultValue 15 000 */
  lockMs?: number;
  /** How long a reader waits for another's refresh before going on with what it has. @defaultValue 10 000 */
  waitMs?: number;
  /** @defaultValue 100 */
  pollMs?: number;
}

/**
 * One refresh of an installation's rotating token at a time, across processes and the
 * concurrent `authorize` calls of one: Slack revokes a refresh token once it is used, so every
 * refresh but the first would be refused (and logged as an error by InstallProvider).
 */
export interface RefreshLock {
  /**
   * `read()`'s installation. When its token is due a refresh, only the one caller that takes
   * the lock gets it as it is (its InstallProvider refreshes and saves); the others wait until
   * the lock is gone and read again: the fresh token needs no refresh.
   */
  read(lockKey: string, read: () => Promise<Installation>): Promise<Installation>;
  /** The refreshed installation is saved: releases the lock the current `authorize` took, if any. */
  saved(lockKey: string): Promise<void>;
  /**
   * Runs one `authorize`; a lock it took and still holds when it ends (the refresh failed, so
   * nothing was saved) is released then, rather than keeping every other reader waiting.
   */
  authorizing<T>(authorize: () => Promise<T>): Promise<T>;
}

export function createRefreshLock(redis: Redis, options: RefreshLockOptions = {}): RefreshLock {
  const { lockMs = 15_000, waitMs = 10_000, pollMs = 100 } = options;
  // The value is a random token, never a Slack one: only its taker releases the lock.
  // Each `authorize` (when run through `authorizing`) knows the tokens it took; `held` has the
  // latest taken in this process, for an `authorize` that was not.
  const calls = new AsyncLocalStorage<Map<string, string>>();
  const held = new Map<string, string>();

  const release = async (lockKey: string, token: string | undefined) => {
    if (token === undefined) return;
    calls.getStore()?.delete(lockKey);
    if (held.get(lockKey) === token) held.delete(lockKey);
    await releaseScript(redis, [lockKey], [token]);
  };

  return {
    async read(lockKey, read) {
      const deadline = Date.now() + waitMs;
      let installation = await read();
      while (needsRefresh(installation)) {
        const token = randomUUID();
        if ((await redis.set(lockKey, token, 'PX', lockMs, 'NX')) === 'OK') {
          held.set(lockKey, token);
          calls.getStore()?.set(lockKey, token);
          // Another taker may have saved a fresh token between the read and the lock.
          installation = await read();
          if (!needsRefresh(installation)) await release(lockKey, token);
          return installation;
        }
        while (Date.now() < deadline && (await redis.exists(lockKey)) === 1) await sleep(pollMs);
        installation = await read();
        // Past the bound (a taker slower than that, or gone): InstallProvider refreshes itself.
        if (Date.now() >= deadline) return installation;
      }
      return installation;
    },
    saved(lockKey) {
      const call = calls.getStore();
      return release(lockKey, call ? call.get(lockKey) : held.get(lockKey));
    },
    authorizing(authorize) {
      const taken = new Map<string, string>();
      return calls.run(taken, async () => {
        try {
          return await authorize();
        } finally {
          // The lock lapses anyway: a Redis error here must not fail the authorize.
          await Promise.all([...taken].map(([lockKey, token]) => release(lockKey, token).catch(() => {})));
        }
      });
    },
  };
}
