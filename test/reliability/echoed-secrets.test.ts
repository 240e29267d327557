import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toPlatformError } from '../../adapters/discord/errors.js';
import { startCanaryBridge, SW, type CanaryBridge } from './support/canary-bridge.js';
import { sleep, until } from './support/guards.js';
import { dumpKeysAt, SHARED_REDIS } from './support/keys.js';

/**
 * Secrets that come back later, inside someone else's words: a platform API error that quotes
 * the bot token. Whatever the bridge keeps of it (the failure log in Redis, shown in the
 * admin pane) has it replaced.
 */
describe('secrets echoed back in error messages', () => {
  let b: CanaryBridge;
  beforeAll(async () => {
    b = await startCanaryBridge('http', { JOB_ATTEMPTS: '1' });
  });
  afterAll(async () => {
    await b?.close();
  });

  it('a Slack error that quotes the token is not stored in Redis', async () => {
    const c = b.canaries;
    b.slack.fail('chat.postMessage', { error: `invalid_auth:${c.SLACK_BOT_TOKEN}`, times: 3 });
    const m = b.slack.userMessage({ channel: SW.general, user: SW.user, text: `<@${b.slack.identity.botUserId}> hi` });
    await b.to.event(m.mention);
    await b.to.event(m.message);
    await until(
      async () => {
        const n = await b.bridge.queue.counts();
        return n.active + n.waiting + n.delayed === 0;
      },
      'idle',
      30_000,
    );
    await sleep(500);
    const redis = await dumpKeysAt(SHARED_REDIS, b.prefix);
    expect(redis).toContain('invalid_auth:[REDACTED]');
    expect(redis).not.toContain(c.SLACK_BOT_TOKEN);
  }, 60_000);

  it("a Discord error cut to length never keeps part of a token (redaction could no longer find it)", () => {
    const token = 'canary-discord-0123456789abcdef.MTIz.abc';
    // The token straddles character 200, where Discord's message is cut.
    const message = `Unauthorized ${'x'.repeat(170)} (token ${token} is not valid)`;
    const e = toPlatformError({ status: 403, code: 0, method: 'post', url: 'https://discord.com/api/v10/channels/1/messages', message }, 'message create');
    expect(e.message).toContain('Unauthorized xxx');
    expect(e.message).not.toContain(token.slice(0, 8));
  });
});
