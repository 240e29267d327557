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
});
