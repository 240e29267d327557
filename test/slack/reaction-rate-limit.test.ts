import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createSlackReplyPort } from '../../adapters/slack/reply-port.js';
import type { ReplyPort } from '../../src/core/reply-port.js';
import { createLogger } from '../../src/logger.js';
import { startSlackEmulator, type SlackEmulator } from '../emulators/slack/index.js';
import { loadTestConfig } from '../support/config.js';
import { LogCapture } from '../support/log-capture.js';

/**
 * Slack rate-limits reactions per workspace (Tier 3), far below what a busy channel asks. The
 * working reaction is best effort: while Slack says to wait, the port adds none and makes no call
 * Slack would refuse, logs the pause once, and still takes down a reaction it did add.
 */
describe('Slack working reaction under a rate limit', () => {
  let slack: SlackEmulator;
  let port: ReplyPort;
  let redis: Redis;
  let logs: LogCapture;
  const channel = 'C0LIMIT01';

  beforeAll(async () => {
    slack = await startSlackEmulator({ users: [{ id: 'U0UMA0001', name: 'Uma' }] });
    redis = new Redis({ lazyConnect: true });
  });
  // A fresh port (and so a fresh gate) per test: a pause must not leak into the next test.
  beforeEach(() => {
    logs = new LogCapture();
    const config = loadTestConfig({ AGENT_API_BASE_URL: 'http://127.0.0.1:1/api/v1', AGENT_API_KEY: 'k', SLACK_BOT_TOKEN: slack.identity.botToken, SLACK_API_URL: slack.apiUrl, ROLE: 'worker' });
    port = createSlackReplyPort({ config, logger: createLogger({ level: 'debug', destination: logs }), redis });
  });
  afterAll(async () => {
    redis.disconnect();
    await slack.close();
  });

  const message = () => {
    const m = slack.userMessage({ channel, user: 'U0UMA0001', text: 'q' });
    return { channelId: channel, threadId: m.ts, messageId: m.ts };
  };
  const calls = (method: string) => slack.callsOf(method).length;
  const waitFor = async (what: () => boolean, ms = 5_000) => {
    const deadline = Date.now() + ms;
    while (!what()) {
      if (Date.now() > deadline) throw new Error('timed out waiting');
      await new Promise((r) => setTimeout(r, 25));
    }
  };

  it('after a 429, adds no working reaction and calls nothing until the wait is over, and logs the pause once', async () => {
    slack.fail('reactions.add', { error: 'ratelimited', retryAfterSeconds: 1 });
    const first = message();
    await port.startWorking!(first);
    const addsAfterLimit = calls('reactions.add');
    const removes = calls('reactions.remove');

    // Twenty more messages inside the wait: not one reaction call, and nothing to take down.
    const more = Array.from({ length: 20 }, message);
    for (const t of more) await port.startWorking!(t);
    for (const t of [first, ...more]) await port.stopWorking!(t, 'ok');
    expect(calls('reactions.add')).toBe(addsAfterLimit);
    expect(calls('reactions.remove')).toBe(removes);
    for (const t of [first, ...more]) expect(slack.reactionsOn(channel, t.messageId)).toEqual([]);
    expect(logs.matching(/rate-limiting reactions/)).toHaveLength(1);
    expect(logs.text).not.toMatch(/could not add the :eyes:/);

    // Once the wait is over the reaction is back, and comes down after the reply.
    await new Promise((r) => setTimeout(r, 1_100));
    const later = message();
    await port.startWorking!(later);
    expect(slack.reactionsOn(channel, later.messageId)).toEqual(['eyes']);
    await port.stopWorking!(later, 'ok');
    expect(slack.reactionsOn(channel, later.messageId)).toEqual([]);
  });

  it('a removal refused with a 429 is tried again after the wait, so the answered message loses its :eyes:', async () => {
    const t = message();
    await port.startWorking!(t);
    expect(slack.reactionsOn(channel, t.messageId)).toEqual(['eyes']);
    slack.fail('reactions.remove', { error: 'ratelimited', retryAfterSeconds: 1 });
    const started = Date.now();
    await port.stopWorking!(t, 'ok');
    // The reply is not held up by the wait.
    expect(Date.now() - started).toBeLessThan(900);
    expect(slack.reactionsOn(channel, t.messageId)).toEqual(['eyes']);
    await waitFor(() => slack.reactionsOn(channel, t.messageId).length === 0);
  });

  it('a message whose earlier attempt showed the reaction still has it taken down when a retry was limited', async () => {
    const t = message();
    await port.startWorking!(t);
    slack.fail('reactions.add', { error: 'ratelimited', retryAfterSeconds: 1 });
    // The retry's own add is refused (already on, or limited): the reaction must still come down.
    await port.startWorking!({ ...t });
    await port.stopWorking!(t, 'ok');
    await waitFor(() => slack.reactionsOn(channel, t.messageId).length === 0);
  });

  it('a failure during the wait skips the :warning: reaction too (the notice says it in words)', async () => {
    slack.fail('reactions.add', { error: 'ratelimited', retryAfterSeconds: 1 });
    const t = message();
    await port.startWorking!(t);
    const adds = calls('reactions.add');
    await port.stopWorking!(t, 'failed');
    expect(calls('reactions.add')).toBe(adds);
    expect(slack.reactionsOn(channel, t.messageId)).toEqual([]);
  });
});
