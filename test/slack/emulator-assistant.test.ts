import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebClient } from '@slack/web-api';
import { MANIFEST_SCOPES, startSlackEmulator, type SlackEmulator } from '../emulators/slack/index.js';

/** The AI app surface and stored messages, as strict as Slack. */
describe('Slack emulator: assistant threads, stored messages, DM events', () => {
  let slack: SlackEmulator;
  let narrow: SlackEmulator;
  let bot: WebClient;
  beforeAll(async () => {
    slack = await startSlackEmulator({ users: [{ id: 'U0UMA0001', name: 'Uma' }] });
    narrow = await startSlackEmulator({ scopes: MANIFEST_SCOPES.filter((s) => s !== 'assistant:write') });
    bot = new WebClient(slack.identity.botToken, { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } });
  });
  afterAll(async () => {
    await slack.close();
    await narrow.close();
  });
  const code = (p: Promise<unknown>) => p.then(() => 'ok', (e: { data?: { error?: string } }) => e.data?.error);

  it('answers invalid_thread_ts for a thread Slack does not know', async () => {
    const { threadTs } = slack.assistantThreadStarted({ user: 'U0UMA0001', dm: 'D0UMA0001' });
    expect(await code(bot.assistant.threads.setTitle({ channel_id: 'D0UMA0001', thread_ts: threadTs, title: 'ok' }))).toBe('ok');
    const unknown = '1700000000.999999';
    expect(await code(bot.assistant.threads.setTitle({ channel_id: 'D0UMA0001', thread_ts: unknown, title: 'x' }))).toBe('invalid_thread_ts');
    expect(await code(bot.assistant.threads.setStatus({ channel_id: 'D0UMA0001', thread_ts: unknown, status: 'is thinking…' }))).toBe('invalid_thread_ts');
    expect(await code(bot.assistant.threads.setSuggestedPrompts({ channel_id: 'D0UMA0001', thread_ts: unknown, prompts: [{ title: 'a', message: 'a' }] }))).toBe('invalid_thread_ts');
  });

  it('needs assistant:write (setStatus: chat:write will do)', async () => {
    const client = new WebClient(narrow.identity.botToken, { slackApiUrl: narrow.apiUrl, retryConfig: { retries: 0 } });
    const { threadTs } = narrow.assistantThreadStarted({ user: 'U0UMA0001', dm: 'D0UMA0001' });
    const args = { channel_id: 'D0UMA0001', thread_ts: threadTs };
    expect(await code(client.assistant.threads.setTitle({ ...args, title: 'x' }))).toBe('missing_scope');
    expect(await code(client.assistant.threads.setSuggestedPrompts({ ...args, prompts: [{ title: 'a', message: 'a' }] }))).toBe('missing_scope');
    expect(await code(client.assistant.threads.setStatus({ ...args, status: 'is thinking…' }))).toBe('ok');
  });

  it('keeps blocks and attachments as posted, and returns them when read back', async () => {
    const blocks = [{ type: 'section', text: { type: 'mrkdwn', text: 'hello *there*' } }];
    const attachments = [{ fallback: 'fb', text: 'attached' }];
    const posted = await bot.chat.postMessage({ channel: 'C0GENERAL', text: '', blocks, attachments });
    const read = await bot.conversations.history({ channel: 'C0GENERAL' });
    const m = read.messages?.find((x) => x.ts === posted.ts);
    expect(m?.blocks).toEqual(blocks);
    expect(m?.attachments).toEqual(attachments);
    expect(await code(bot.chat.postMessage({ channel: 'C0GENERAL', attachments: [{ fallback: 'only', text: 'only an attachment' }] }))).toBe('ok');
  });

  it('sends no app_mention for a message in a DM', () => {
    const m = slack.userMessage({ channel: 'D0UMA0001', user: 'U0UMA0001', text: `<@${slack.identity.botUserId}> hi` });
    expect(m.message).toMatchObject({ type: 'message', channel_type: 'im' });
    expect(() => m.mention).toThrow(/no app_mention/);
    expect(slack.userMessage({ channel: 'C0GENERAL', user: 'U0UMA0001', text: 'x' }).mention).toMatchObject({ type: 'app_mention' });
  });
});
