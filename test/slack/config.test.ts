import { randomBytes } from 'node:crypto';
import { slackConfigOf } from '../../adapters/slack/config.js';
import { loadTestConfig } from '../support/config.js';
import { describe, expect, it } from 'vitest';

import { configProblem } from '../support/config-problem.js';
import { createSealedBox } from '../../src/crypto/sealed-box.js';
import { SLACK_BOT_SCOPES } from '../../adapters/slack/oauth.js';
import { MANIFEST_SCOPES } from '../emulators/slack/index.js';

const real = { AGENT_API_BASE_URL: 'https://openhelixai.com/api/v1', AGENT_API_KEY: 'key-1234', SLACK_SIGNING_SECRET: 'signing-secret' };
const oauth = { SLACK_CLIENT_ID: '1111.2222', SLACK_CLIENT_SECRET: 'client-secret', SLACK_STATE_SECRET: 'state-secret-0123456789' };

const problem = configProblem;

describe('"Add to Slack" settings', () => {
  it('turns on OAuth with SLACK_CLIENT_ID instead of SLACK_BOT_TOKEN, and keeps the key as 32 bytes', () => {
    const key = randomBytes(32);
    const config = loadTestConfig({ ...real, ...oauth, INSTALLATION_ENCRYPTION_KEY: key.toString('hex') });
    expect(slackConfigOf(config)?.oauth).toEqual({ clientId: '1111.2222', clientSecret: 'client-secret', stateSecret: 'state-secret-0123456789' });
    expect(slackConfigOf(config)?.botToken).toBeUndefined();
    expect(Buffer.from(config.encryptionKey!, 'base64').equals(key)).toBe(true);
    // The secrets are known to the logger's redaction.
    expect(config.secrets).toEqual(expect.arrayContaining(['client-secret', 'state-secret-0123456789', key.toString('hex')]));
  });

  it('an install asks for exactly the manifest\'s bot scopes', () => {
    expect([...SLACK_BOT_SCOPES].sort()).toEqual([...MANIFEST_SCOPES].sort());
  });

  it('names each missing or wrong OAuth setting and its fix', () => {
    expect(problem({ ...real, SLACK_CLIENT_ID: '1111.2222' })).toMatch(/SLACK_CLIENT_SECRET is missing[\s\S]*SLACK_STATE_SECRET is missing[\s\S]*INSTALLATION_ENCRYPTION_KEY is missing .*openssl rand -base64 32/);
    expect(problem({ ...real, ...oauth, INSTALLATION_ENCRYPTION_KEY: 'too-short' })).toMatch(/INSTALLATION_ENCRYPTION_KEY must be 32 random bytes/);
    expect(problem({ ...real, ...oauth, INSTALLATION_ENCRYPTION_KEY: randomBytes(16).toString('base64') })).toMatch(/INSTALLATION_ENCRYPTION_KEY must be 32/);
    expect(problem({ ...real, ...oauth, SLACK_BOT_TOKEN: 'xoxb-1', INSTALLATION_ENCRYPTION_KEY: randomBytes(32).toString('base64') })).toMatch(
      /SLACK_BOT_TOKEN and SLACK_CLIENT_ID exclude each other/,
    );
  });
});

describe('sealed box (AES-256-GCM)', () => {
  const box = createSealedBox(randomBytes(32).toString('base64'));
  it('opens what it sealed, under the same context only', () => {
    const sealed = box.seal('xoxb-secret-token', 'key:a');
    expect(sealed).not.toContain('xoxb');
    expect(box.open(sealed, 'key:a')).toBe('xoxb-secret-token');
    expect(() => box.open(sealed, 'key:b')).toThrow();
    expect(box.seal('same', 'k')).not.toBe(box.seal('same', 'k'));
  });
  it('refuses a tampered value or another key', () => {
    const sealed = box.seal('xoxb-secret-token', 'k');
    const parts = sealed.split('.');
    const body = Buffer.from(parts[3]!, 'base64');
    body[0] = body[0]! ^ 1;
    expect(() => box.open([...parts.slice(0, 3), body.toString('base64')].join('.'), 'k')).toThrow();
    expect(() => createSealedBox(randomBytes(32).toString('base64')).open(sealed, 'k')).toThrow();
  });
});
