import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTestConfig } from '../support/config.js';
import { Redis } from 'ioredis';
import { createSlackReplyPort, compareTs } from '../../adapters/slack/reply-port.js';

import { PlatformError } from '../../src/core/errors.js';
import type { ReplyPort } from '../../src/core/reply-port.js';
import { createLogger } from '../../src/logger.js';
import { startSlackEmulator, type SlackEmulator } from '../emulators/slack/index.js';
import { LogCapture } from '../support/pipeline.js';

/** The worker's side alone: the reply port against the emulator, no Bolt, no queue. */
describe('Slack reply port', () => {
  let slack: SlackEmulator;
  let port: ReplyPort;
  let redis: Redis;
  const logs = new LogCapture();

  beforeAll(async () => {
    slack = await startSlackEmulator({ users: [{ id: 'U0UMA0001', name: 'Uma' }] });
    redis = new Redis({ lazyConnect: true });
    const config = loadTestConfig({ AGENT_API_BASE_URL: 'http://127.0.0.1:1/api/v1', AGENT_API_KEY: 'k', SLACK_BOT_TOKEN: slack.identity.botToken, SLACK_API_URL: slack.apiUrl, ROLE: 'worker' });
    port = createSlackReplyPort({ config, logger: createLogger({ level: 'debug', destination: logs }), redis });
  });
  afterAll(async () => {
    redis.disconnect();
    await slack.close();
  });

  const target = (ts: string, extra: object = {}) => ({ channelId: 'C0PORT001', threadId: ts, messageId: ts, ...extra });

  it('posts in the thread, or inline, without unfurling, with the bot token', async () => {
    await port.postChunk(target('1700000000.000001'), 'in a thread', 0);
    await port.postChunk({ channelId: 'D0PORT001', messageId: '1700000000.000002', inline: true }, 'inline', 0);
    const [threaded, inline] = slack.posted().slice(-2);
    expect(threaded!.params).toMatchObject({ channel: 'C0PORT001', thread_ts: '1700000000.000001', text: 'in a thread', unfurl_links: 'false' });
    expect(inline!.params.thread_ts).toBeUndefined();
    expect(threaded!.authorization).toBe(`Bearer ${slack.identity.botToken}`);
  });

  it('neutralises mentions in whatever it is asked to post', async () => {
    await port.postChunk(target('1700000000.000003'), 'hi <!channel> <@U0UMA0001> <https://ok.example|ok>', 0);
    await port.postNotice(target('1700000000.000003'), 'notice <!here>');
    const posts = slack.posted().slice(-2);
    expect(posts.flatMap((p) => p.pings)).toEqual([]);
    expect(posts[0]!.params.text).toContain('<https://ok.example|ok>');
  });

  it('turns a 429 into rate_limited with Retry-After, after one call (no retries inside)', async () => {
    slack.fail('chat.postMessage', { error: 'ratelimited', retryAfterSeconds: 7 });
    const before = slack.callsOf('chat.postMessage').length;
    // A channel of its own: its posts are paced for the 7 s Slack asked for (the next test).
    const limited = target('1700000000.000004', { channelId: 'C0LIMITED' });
    const err = await port.postChunk(limited, 'x', 0).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect(err).toMatchObject({ kind: 'rate_limited', retryAfterMs: 7000, source: 'slack' });
    expect(slack.callsOf('chat.postMessage').length).toBe(before + 1);
  });

  it("holds the channel's next posts for the Retry-After Slack asked for (chat.postMessage's limit is per channel), not the others", async () => {
    const before = slack.callsOf('chat.postMessage').length;
    const err = await port.postChunk(target('1700000000.000004', { channelId: 'C0LIMITED' }), 'y', 0).catch((e: unknown) => e);
    // 7 s is more than a post waits in line: handed back without asking Slack, to be retried later.
    expect(err).toMatchObject({ kind: 'rate_limited', code: 'paced', source: 'slack' });
    expect((err as PlatformError).retryAfterMs).toBeGreaterThanOrEqual(5_000);
    expect(slack.callsOf('chat.postMessage').length).toBe(before);
    await port.postChunk(target('1700000000.000004'), 'another channel', 0);
    expect(slack.callsOf('chat.postMessage').length).toBe(before + 1);
  });

  it.each([
    ['http_500', 'server_error'],
    ['not_in_channel', 'refused'],
    ['channel_not_found', 'refused'],
    ['is_archived', 'refused'],
    ['invalid_auth', 'unauthorized'],
    ['missing_scope', 'forbidden'],
    ['msg_too_long', 'bad_request'],
  ])('maps %s to %s after one call', async (error, kind) => {
    slack.fail('chat.postMessage', { error });
    const before = slack.callsOf('chat.postMessage').length;
    // A channel of its own: a refusal of a channel is remembered (no notice, no reactions there).
    const err = (await port.postChunk(target('1700000000.000005', { channelId: 'C0REFUSED' }), 'x', 0).catch((e: unknown) => e)) as PlatformError;
    expect(err.kind).toBe(kind);
    if (!error.startsWith('http_')) expect(err.code).toBe(error);
    expect(err.message).not.toContain(slack.identity.botToken);
    expect(slack.callsOf('chat.postMessage').length).toBe(before + 1);
  });

  it('refuses a message over Slack’s 40,000 characters (the emulator is strict)', async () => {
    const err = (await port.postChunk(target('1700000000.000006'), 'x'.repeat(40_001), 0).catch((e: unknown) => e)) as PlatformError;
    expect(err.code).toBe('msg_too_long');
  });

  it('adds and removes the working reaction; already_reacted and no_reaction are fine; failure adds warning', async () => {
    const m = slack.userMessage({ channel: 'C0PORT001', user: 'U0UMA0001', text: 'q' });
    const t = target(m.ts);
    await port.startWorking!(t);
    await port.startWorking!(t);
    expect(slack.reactionsOn('C0PORT001', m.ts)).toEqual(['eyes']);
    await port.stopWorking!(t, 'failed');
    await port.stopWorking!(t, 'failed');
    expect(slack.reactionsOn('C0PORT001', m.ts)).toEqual(['warning']);
    expect(logs.text).not.toMatch(/already_reacted|no_reaction/);
  });

  it('never fails a reply over a reaction', async () => {
    slack.fail('reactions.add', { error: 'ratelimited', retryAfterSeconds: 1 });
    await expect(port.startWorking!(target('1700000000.999999'))).resolves.toBeUndefined();
  });

  it('fetches the earlier messages of a thread, oldest first, speakers named, bots marked', async () => {
    const root = slack.userMessage({ channel: 'C0PORT002', user: 'U0UMA0001', text: 'root <@UBOT0001> question &amp; more' });
    slack.userMessage({ channel: 'C0PORT002', user: 'x', botId: 'BOTHER', text: 'bot says', threadTs: root.ts });
    const trigger = slack.userMessage({ channel: 'C0PORT002', user: 'U0UMA0001', text: 'trigger', threadTs: root.ts });
    slack.userMessage({ channel: 'C0PORT002', user: 'U0UMA0001', text: 'later', threadTs: root.ts });
    const thread = await port.fetchThread!({ channelId: 'C0PORT002', threadId: root.ts, messageId: trigger.ts }, 10);
    expect(thread).toEqual([
      { author: 'Uma', text: 'root question & more', isBot: false },
      { author: 'bot', text: 'bot says', isBot: true },
    ]);
    expect(await port.fetchThread!({ channelId: 'C0PORT002', threadId: root.ts, messageId: trigger.ts }, 1)).toHaveLength(1);
    expect(await port.fetchThread!({ channelId: 'C0PORT002', threadId: root.ts, messageId: root.ts }, 10)).toEqual([]);
  });

  it('orders Slack timestamps exactly', () => {
    expect(compareTs('1700000000.000100', '1700000000.000099')).toBe(1);
    expect(compareTs('1700000000.0001', '1700000000.000100')).toBe(0);
    expect(compareTs('999999999.999999', '1700000000.000000')).toBe(-1);
  });
});
