import { describe, expect, it } from 'vitest';
import { createBoltLogger } from '../../adapters/slack/bolt-logger.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import { LogCapture } from '../support/log-capture.js';

describe("the Slack SDK's log lines", () => {
  it('a long line is cut where it keeps a token whole or leaves it out, never half of it (redaction could no longer find it)', () => {
    const registry = new SecretRegistry();
    const token = 'xoxb-canary-1234567890-abcdefghijklmnop';
    registry.add(token);
    const logs = new LogCapture();
    const sdk = createBoltLogger(createLogger({ level: 'trace', registry, destination: logs }));
    // The token straddles character 2,000, where the line is cut.
    sdk.error(`An API error occurred: ${'x'.repeat(1960)} token ${token} was refused`);
    expect(logs.text).toContain('An API error occurred: xxx');
    expect(logs.text).not.toContain(token.slice(0, 8));
  });
});
