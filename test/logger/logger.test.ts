import { describe, expect, it } from 'vitest';
import { createLogger, SecretRegistry } from '../../src/logger.js';
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
});

