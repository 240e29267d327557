import { describe, expect, it } from 'vitest';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import { fingerprintKey, FingerprintSet, LOG_LINE_WORDS } from '../../src/crypto/credential-fingerprints.js';
import { LogCapture } from '../support/pipeline.js';

describe('logger redaction', () => {
  it('removes secret values from every line, whatever field or message carries them', () => {
    const registry = new SecretRegistry();
    const logs = new LogCapture();
    const logger = createLogger({ level: 'trace', registry, destination: logs });
    registry.add('sk-canary-"quoted"\\value');
    const release = registry.add('credential-canary-42');
    logger.info({ note: 'key is sk-canary-"quoted"\\value' }, 'hello');
    logger.error(new Error('boom credential-canary-42'));
    logger.warn({ url: `https://x.test/?k=${encodeURIComponent('credential-canary-42')}` }, 'url');
    logger.info({ headers: { authorization: 'Bearer abc', 'x-api-key': 'abc' }, token: 't', value: 'v' }, 'fields');
    expect(logs.text).not.toContain('sk-canary');
    expect(logs.text).not.toContain('credential-canary-42');
    expect(logs.text).not.toContain('Bearer abc');
    expect(logs.text.match(/\[REDACTED\]/g)!.length).toBeGreaterThanOrEqual(5);
    release();
    logger.info('credential-canary-42 released');
    expect(logs.lines.at(-1)).toContain('credential-canary-42 released');
  });

  it('also finds a secret quoted with Markdown backslash escapes (a chat client shows it unescaped)', () => {
    const registry = new SecretRegistry();
    registry.add('sk_live-canary.42');
    expect(registry.redact('key sk\\_live\\-canary\\.42, raw sk_live-canary.42, other sk_live')).toBe('key [REDACTED], raw [REDACTED], other sk_live');
  });

  it('runs every line through an added redactor (credential fingerprints) until it is removed', () => {
    const registry = new SecretRegistry();
    const logs = new LogCapture();
    const logger = createLogger({ level: 'info', registry, destination: logs });
    const set = new FingerprintSet(fingerprintKey('deployment-secret'));
    set.addMember(set.member('sk-live-fpcanary-77'));
    const remove = registry.addRedactor((line) => set.redact(line, LOG_LINE_WORDS));
    // An agent error a worker logs: the value inside the JSON string, the next field right after it.
    logger.warn({ err: { message: 'instance stopped: OPENAI_API_KEY=sk-live-fpcanary-77' }, ref: 'X' }, 'gave up on a message');
    logger.info({ reason: 'sk-live-fpcanary-77' }, 'quoted alone');
    expect(logs.text).not.toContain('fpcanary');
    expect(logs.lines[0]).toContain('OPENAI_API_KEY=[REDACTED]');
    remove();
    logger.info('sk-live-fpcanary-77 after');
    expect(logs.lines.at(-1)).toContain('sk-live-fpcanary-77 after');
  });
});
