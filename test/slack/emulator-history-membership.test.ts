import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebClient } from '@slack/web-api';
import { startSlackEmulator, type SlackEmulator } from '../emulators/slack/index.js';
import { slackErrorCode } from '../../adapters/slack/errors.js';

/**
 * A bot token reads only conversations the bot is in, as on Slack: `conversations.history` and
 * `conversations.replies` on a public channel it is not in answer `not_in_channel`, and on a
 * private channel or a DM between other people `channel_not_found`. The emulator read any of them.
 */
describe('Slack emulator: reading a conversation the bot is not in', () => {
  let slack: SlackEmulator;
  let bot: WebClient;
  beforeAll(async () => {
    slack = await startSlackEmulator({
      users: [{ id: 'U0UMA0001', name: 'Uma' }],
      channels: [{ id: 'C0OUTSIDE', member: false }, { id: 'G0PRIVATE', member: false }, { id: 'D0PEERS01', member: false }, { id: 'C0INSIDE1' }],
    });
    bot = new WebClient(slack.identity.botToken, { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true });
  });
  afterAll(async () => slack.close());

  const codeOf = (p: Promise<unknown>) => p.then(() => 'ok', (err: unknown) => slackErrorCode(err));

  it.each([
    ['a public channel', 'C0OUTSIDE', 'not_in_channel'],
    ['a private channel', 'G0PRIVATE', 'channel_not_found'],
    ['a DM between other people', 'D0PEERS01', 'channel_not_found'],
  ])('%s: history and replies are refused (%s)', async (_what, channel, code) => {
    const m = slack.userMessage({ channel, user: 'U0UMA0001', text: 'not for the bot' });
    expect(await codeOf(bot.conversations.history({ channel }))).toBe(code);
    expect(await codeOf(bot.conversations.replies({ channel, ts: m.ts }))).toBe(code);
  });

  it('a channel the bot is in: read as before', async () => {
    const m = slack.userMessage({ channel: 'C0INSIDE1', user: 'U0UMA0001', text: 'hello bot' });
    expect((await bot.conversations.replies({ channel: 'C0INSIDE1', ts: m.ts })).messages?.[0]?.text).toBe('hello bot');
    expect((await bot.conversations.history({ channel: 'C0INSIDE1' })).messages?.[0]?.text).toBe('hello bot');
  });
});
