import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebClient } from '@slack/web-api';
import { startSlackEmulator, type SlackEmulator } from '../emulators/slack/index.js';

const ADMIN = 'U0ADMIN01';
const error = (p: Promise<unknown>) => p.then(() => 'ok', (e: { data?: { error?: string } }) => e.data?.error ?? String(e));

/**
 * Slack's answers once a channel is archived, deleted or left by the bot: the bridge's handling of
 * a place that went away is only proven if the emulator refuses as Slack does.
 */
describe('Slack emulator: a channel archived, deleted, or the bot removed', () => {
  let slack: SlackEmulator;
  let bot: WebClient;
  beforeAll(async () => {
    slack = await startSlackEmulator({ users: [{ id: ADMIN, name: 'Ada' }] });
    bot = new WebClient(slack.identity.botToken, { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true });
  });
  afterAll(async () => slack.close());

  const postIn = (channel: string) => error(bot.chat.postMessage({ channel, text: 'x' }));
  const react = (channel: string, ts: string) => error(bot.reactions.add({ channel, timestamp: ts, name: 'eyes' }));

  it('archived: posts and reactions fail with is_archived, the history still reads; unarchived it works again', async () => {
    const before = slack.userMessage({ channel: 'C0ARCH001', user: ADMIN, text: 'hi' });
    expect(slack.archiveChannel('C0ARCH001', ADMIN)).toEqual([expect.objectContaining({ type: 'channel_archive', channel: 'C0ARCH001', user: ADMIN })]);
    expect(await postIn('C0ARCH001')).toBe('is_archived');
    expect(await react('C0ARCH001', before.ts)).toBe('is_archived');
    expect(await error(bot.conversations.history({ channel: 'C0ARCH001' }))).toBe('ok');
    expect((await bot.conversations.info({ channel: 'C0ARCH001' })).channel).toMatchObject({ is_archived: true });
    expect(slack.unarchiveChannel('C0ARCH001', ADMIN)[0]).toMatchObject({ type: 'channel_unarchive' });
    expect(await postIn('C0ARCH001')).toBe('ok');
    expect(await react('C0ARCH001', before.ts)).toBe('ok');
  });

  it('a private channel archived sends group_archive', () => {
    expect(slack.archiveChannel('G0PRIV001', ADMIN)[0]).toMatchObject({ type: 'group_archive', channel: 'G0PRIV001' });
  });

  it('deleted: every method answers channel_not_found', async () => {
    const before = slack.userMessage({ channel: 'C0DELE001', user: ADMIN, text: 'hi' });
    expect(slack.deleteChannel('C0DELE001', ADMIN)[0]).toMatchObject({ type: 'channel_deleted', channel: 'C0DELE001' });
    expect(await postIn('C0DELE001')).toBe('channel_not_found');
    expect(await react('C0DELE001', before.ts)).toBe('channel_not_found');
    expect(await error(bot.conversations.info({ channel: 'C0DELE001' }))).toBe('channel_not_found');
    expect(await error(bot.conversations.replies({ channel: 'C0DELE001', ts: before.ts }))).toBe('channel_not_found');
  });

  it('the bot removed: not_in_channel, with channel_left and member_left_channel; invited back it posts again', async () => {
    const events = slack.removeBot('C0KICK001', ADMIN);
    expect(events.map((e) => e.type)).toEqual(['channel_left', 'member_left_channel']);
    expect(events[1]).toMatchObject({ user: slack.identity.botUserId, channel: 'C0KICK001' });
    expect(await postIn('C0KICK001')).toBe('not_in_channel');
    expect(slack.inviteBot('C0KICK001', ADMIN)[0]).toMatchObject({ type: 'member_joined_channel', user: slack.identity.botUserId });
    expect(await postIn('C0KICK001')).toBe('ok');
  });
});
