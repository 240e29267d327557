import { randomBytes, randomUUID } from 'node:crypto';
import type { Installation } from '@slack/bolt';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createSlackInstallations } from '../../adapters/slack/installations.js';
import { createSealedBox } from '../../src/crypto/sealed-box.js';
import { SecretRegistry } from '../../src/logger.js';
import { deleteKeys, dumpKeys } from '../support/redis-cleanup.js';

const prefix = `inst-${randomUUID().slice(0, 8)}`;
const redis = new Redis('redis://127.0.0.1:6379');
afterAll(async () => {
  redis.disconnect();
  await deleteKeys(prefix);
});

const installation = (team: string, token: string): Installation =>
  ({ team: { id: team }, enterprise: undefined, isEnterpriseInstall: false, bot: { token, refreshToken: `${token}-refresh`, userId: 'UBOT', id: 'BBOT', scopes: [] }, user: { id: 'U1', token: undefined, scopes: undefined } }) as Installation;

describe('Slack installations in Redis', () => {
  const secrets = new SecretRegistry();
  const store = createSlackInstallations(redis, prefix, createSealedBox(randomBytes(32).toString('base64')), pino({ level: 'silent' }), (t) => secrets.add(t));

  it('keeps tokens sealed, reads them back, and tells the redaction about the current ones only', async () => {
    await store.storeInstallation(installation('T1', 'xoxb-first-token'));
    expect(await dumpKeys(prefix)).not.toContain('xoxb-first');
    const back = await store.fetchInstallation({ teamId: 'T1', enterpriseId: undefined, isEnterpriseInstall: false });
    expect(back.bot?.token).toBe('xoxb-first-token');
    expect(secrets.redact('xoxb-first-token xoxb-first-token-refresh')).toBe('[REDACTED] [REDACTED]');
    // Rotated: the new token is redacted, the old one is forgotten (the pattern stays small).
    await store.storeInstallation(installation('T1', 'xoxb-second-token'));
    expect(secrets.redact('xoxb-second-token')).toBe('[REDACTED]');
    expect(secrets.redact('xoxb-first-token')).toBe('xoxb-first-token');
  });

  it('announces every change on its channel and deletes on uninstall', async () => {
    const sub = redis.duplicate();
    const heard: string[] = [];
    sub.on('message', (_c, m: string) => heard.push(m));
    await sub.subscribe(store.changes);
    await store.storeInstallation(installation('T2', 'xoxb-t2-token'));
    await store.deleteInstallation({ teamId: 'T2', enterpriseId: undefined, isEnterpriseInstall: false });
    await expect(store.fetchInstallation({ teamId: 'T2', enterpriseId: undefined, isEnterpriseInstall: false })).rejects.toThrow(/no Slack installation for team:T2/);
    await new Promise<void>((resolve) => (heard.length >= 2 ? resolve() : sub.on('message', () => heard.length >= 2 && resolve())));
    expect(heard).toEqual(['team:T2', 'team:T2']);
    sub.disconnect();
  });

  it('does not open a value moved under another installation\'s key', async () => {
    const sealed = await redis.get(`${prefix}:slack:installation:team:T1`);
    await redis.set(`${prefix}:slack:installation:team:T3`, sealed!);
    await expect(store.fetchInstallation({ teamId: 'T3', enterpriseId: undefined, isEnterpriseInstall: false })).rejects.toThrow();
  });

  describe('a rotating token due a refresh (InstallProvider refreshes within 2 hours of expiry)', () => {
    const box = createSealedBox(randomBytes(32).toString('base64'));
    const silent = pino({ level: 'silent' });
    /** One store per process: same Redis, prefix and key. */
    const inProcess = (lock?: { lockMs: number; waitMs: number }) => createSlackInstallations(redis, prefix, box, silent, () => {}, lock);
    const query = (team: string) => ({ teamId: team, enterpriseId: undefined, isEnterpriseInstall: false });
    const rotating = (team: string, token: string, expiresIn: number): Installation => {
      const i = installation(team, token);
      return { ...i, authVersion: 'v2', bot: { ...i.bot!, expiresAt: Math.floor(Date.now() / 1000) + expiresIn } } as Installation;
    };
    const lockOf = (team: string) => `${prefix}:slack:installation-refresh:team:${team}`;

    it('goes to one reader at a time; the others wait for its save and read the fresh token', async () => {
      const [a, b] = [inProcess(), inProcess()];
      await a.storeInstallation(rotating('T4', 'xoxb-t4-expiring', 3_600));
      // The first reader takes the lock: its InstallProvider refreshes.
      expect((await a.fetchInstallation(query('T4'))).bot?.token).toBe('xoxb-t4-expiring');
      // Neither a second process nor a second reader in the same one gets the expiring token.
      let read: string[] = [];
      const waiting = Promise.all([b.fetchInstallation(query('T4')), a.fetchInstallation(query('T4'))]).then((r) => (read = r.map((i) => i.bot!.token!)));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(read).toEqual([]);
      // The lock holds a random value of its own, no token.
      expect(await redis.get(lockOf('T4'))).toMatch(/^[0-9a-f-]{36}$/);
      await a.storeInstallation(rotating('T4', 'xoxb-t4-fresh', 43_200));
      await waiting;
      expect(read).toEqual(['xoxb-t4-fresh', 'xoxb-t4-fresh']);
      expect(await redis.exists(lockOf('T4'))).toBe(0);
    });

    it('a token outside the window is read without a lock', async () => {
      const a = inProcess();
      await a.storeInstallation(rotating('T5', 'xoxb-t5-fresh', 7_260));
      expect((await a.fetchInstallation(query('T5'))).bot?.token).toBe('xoxb-t5-fresh');
      expect(await redis.exists(lockOf('T5'))).toBe(0);
    });

    it('a refresh that fails releases the lock when its authorize ends', async () => {
      const [a, b] = [inProcess(), inProcess()];
      await a.storeInstallation(rotating('T7', 'xoxb-t7-expiring', 60));
      // As InstallProvider does when Slack refuses the refresh: read, and save nothing.
      const refused = a.authorizing(async () => {
        await a.fetchInstallation(query('T7'));
        await new Promise((resolve) => setTimeout(resolve, 200));
        throw new Error('invalid_refresh_token');
      });
      const waiting = b.fetchInstallation(query('T7'));
      await expect(refused).rejects.toThrow('invalid_refresh_token');
      const started = Date.now();
      expect((await waiting).bot?.token).toBe('xoxb-t7-expiring');
      // b took the lock once it was released, not after a 10 s bound.
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(await redis.exists(lockOf('T7'))).toBe(1);
    });

    it('a taker that is gone leaves the lock to lapse; a reader waits no longer than its bound', async () => {
      const [a, b] = [inProcess({ lockMs: 1_500, waitMs: 400 }), inProcess({ lockMs: 1_500, waitMs: 400 })];
      await a.storeInstallation(rotating('T6', 'xoxb-t6-expiring', 60));
      await a.fetchInstallation(query('T6'));
      // Nothing is saved and no authorize ends (the process died): b goes on with what there is after 400 ms.
      const started = Date.now();
      expect((await b.fetchInstallation(query('T6'))).bot?.token).toBe('xoxb-t6-expiring');
      expect(Date.now() - started).toBeGreaterThanOrEqual(400);
      expect(await redis.exists(lockOf('T6'))).toBe(1);
      // Once it lapsed, the next reader takes it.
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      expect(await redis.exists(lockOf('T6'))).toBe(0);
      await b.fetchInstallation(query('T6'));
      expect(await redis.exists(lockOf('T6'))).toBe(1);
    });
  });
});
