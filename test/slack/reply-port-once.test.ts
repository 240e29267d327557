import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTestConfig } from '../support/config.js';
import { Redis } from 'ioredis';
import { createSlackReplyPort } from '../../adapters/slack/reply-port.js';
import { REPLY_EVENT_TYPE } from '../../adapters/slack/posted-chunks.js';

import { PlatformError } from '../../src/core/errors.js';
import type { ReplyTarget } from '../../src/core/message.js';
import type { ChunkInfo, ReplyPort } from '../../src/core/reply-port.js';
import { createLogger } from '../../src/logger.js';
import { MANIFEST_SCOPES, startSlackEmulator, type SlackEmulator } from '../emulators/slack/index.js';
import { LogCapture } from '../support/pipeline.js';

/**
 * A reply chunk is posted once even when an earlier attempt's post reached Slack and its answer
 * was lost: every chunk carries metadata, and a retry (`mayExist`) reads the conversation back.
 */
describe('Slack reply port: no chunk posted twice', () => {
  let slack: SlackEmulator;
  let port: ReplyPort;
  let redis: Redis;
  const logs = new LogCapture();
  const user = 'U0UMA0001';

  const portFor = (s: SlackEmulator, capture = logs) => {
    const config = loadTestConfig({ AGENT_API_BASE_URL: 'http://127.0.0.1:1/api/v1', AGENT_API_KEY: 'k', SLACK_BOT_TOKEN: s.identity.botToken, SLACK_API_URL: s.apiUrl, ROLE: 'worker' });
    return createSlackReplyPort({ config, logger: createLogger({ level: 'debug', destination: capture }), redis });
  };

  beforeAll(async () => {
    slack = await startSlackEmulator({ users: [{ id: user, name: 'Uma' }] });
    redis = new Redis({ lazyConnect: true });
    port = portFor(slack);
  });
  afterAll(async () => {
    redis.disconnect();
    await slack.close();
  });

  /** A question in a channel: the reply goes in its thread. */
  const question = (channel: string): ReplyTarget => {
    const m = slack.userMessage({ channel, user, text: 'question' });
    return { channelId: channel, threadId: m.ts, messageId: m.ts };
  };
  const info = (target: ReplyTarget, mayExist: boolean, total = 3): ChunkInfo => ({ messageId: target.messageId, total, mayExist });
  const postsIn = (channel: string) => slack.posted((c) => c.params.channel === channel);
  const chunkPosts = (channel: string, index: number) =>
    slack.state.messages.filter((m) => m.channel === channel && m.metadata?.event_type === REPLY_EVENT_TYPE && m.metadata.event_payload.chunk === index);

  it('posts every chunk with metadata naming the message and the chunk, and nothing else', async () => {
    const t = question('C0ONCE001');
    await port.postChunk(t, 'first', 0, info(t, false));
    await port.postChunk({ channelId: 'C0ONCE001', messageId: '1700000000.000001' }, 'no info', 0);
    const [withInfo, without] = postsIn('C0ONCE001');
    expect(JSON.parse(withInfo!.params.metadata!)).toEqual({ event_type: 'agent_bridge_reply', event_payload: { message_id: t.messageId, chunk: 0 } });
    expect(JSON.parse(without!.params.metadata!)).toEqual({ event_type: 'agent_bridge_reply', event_payload: { message_id: '1700000000.000001', chunk: 0 } });
    // Without mayExist nothing is read back first.
    expect(slack.callsOf('conversations.replies')).toHaveLength(0);
  });

  it('with mayExist and the chunk already in the thread: looks it up and does not post it again', async () => {
    const t = question('C0ONCE002');
    await port.postChunk(t, 'chunk 0', 0, info(t, false));
    await port.postChunk(t, 'chunk 1', 1, info(t, false));
    await port.postChunk(t, 'chunk 1', 1, info(t, true));
    expect(postsIn('C0ONCE002')).toHaveLength(2);
    expect(chunkPosts('C0ONCE002', 1)).toHaveLength(1);
    const lookup = slack.callsOf('conversations.replies', (c) => c.params.channel === 'C0ONCE002');
    expect(lookup).toHaveLength(1);
    expect(lookup[0]!.params).toMatchObject({ ts: t.threadId, oldest: t.messageId, include_all_metadata: 'true', limit: '200' });
    expect(logs.text).toContain('already in Slack');
  });

  it('with mayExist and the chunk not there: posts it, once', async () => {
    const t = question('C0ONCE003');
    await port.postChunk(t, 'chunk 0', 0, info(t, false));
    await port.postChunk(t, 'chunk 1', 1, info(t, true));
    expect(chunkPosts('C0ONCE003', 0)).toHaveLength(1);
    expect(chunkPosts('C0ONCE003', 1)).toHaveLength(1);
    expect(slack.callsOf('conversations.replies', (c) => c.params.channel === 'C0ONCE003')).toHaveLength(1);
  });

  it('in a DM (inline replies) reads the channel history after the question', async () => {
    const m = slack.userMessage({ channel: 'D0ONCE001', user, text: 'dm question' });
    const t: ReplyTarget = { channelId: 'D0ONCE001', messageId: m.ts, inline: true };
    await port.postChunk(t, 'dm chunk', 0, info(t, true, 1));
    await port.postChunk(t, 'dm chunk', 0, info(t, true, 1));
    expect(chunkPosts('D0ONCE001', 0)).toHaveLength(1);
    const lookups = slack.callsOf('conversations.history', (c) => c.params.channel === 'D0ONCE001');
    expect(lookups).toHaveLength(2);
    expect(lookups[0]!.params).toMatchObject({ oldest: m.ts, include_all_metadata: 'true' });
  });

  it('counts only its own posts: the same metadata from another app, or for another message, is not the chunk', async () => {
    const t = question('C0ONCE004');
    slack.state.messages.push({
      ts: slack.state.nextTs(),
      channel: 'C0ONCE004',
      thread_ts: t.threadId,
      text: 'imitation',
      bot_id: 'BOTHER001',
      user: 'UOTHER001',
      metadata: { event_type: REPLY_EVENT_TYPE, event_payload: { message_id: t.messageId, chunk: 0 } },
      reactions: new Map(),
    });
    await port.postChunk(t, 'other message', 0, { messageId: 'another', total: 1, mayExist: false });
    await port.postChunk(t, 'real', 0, info(t, true, 1));
    expect(postsIn('C0ONCE004').map((c) => c.params.text)).toEqual(['other message', 'real']);
  });

  it('pages through a busy thread to find the chunk', async () => {
    const t = question('C0ONCE005');
    for (let i = 0; i < 450; i++) slack.userMessage({ channel: 'C0ONCE005', user, text: `chatter ${i}`, threadTs: t.threadId });
    await port.postChunk(t, 'late chunk', 0, info(t, false, 1));
    await port.postChunk(t, 'late chunk', 0, info(t, true, 1));
    expect(chunkPosts('C0ONCE005', 0)).toHaveLength(1);
    expect(slack.callsOf('conversations.replies', (c) => c.params.channel === 'C0ONCE005')).toHaveLength(3);
  });

  it('stops looking after 1,000 newer messages and posts, saying so in the log', async () => {
    const t = question('C0ONCE006');
    for (let i = 0; i < 1_100; i++) slack.userMessage({ channel: 'C0ONCE006', user, text: `flood ${i}`, threadTs: t.threadId });
    await port.postChunk(t, 'chunk', 0, info(t, true, 1));
    expect(slack.callsOf('conversations.replies', (c) => c.params.channel === 'C0ONCE006')).toHaveLength(5);
    expect(chunkPosts('C0ONCE006', 0)).toHaveLength(1);
    expect(logs.text).toContain('gave up looking');
  });

  it.each([
    ['http_500', 'server_error'],
    ['ratelimited', 'rate_limited'],
    ['internal_error', 'server_error'],
  ])('a lookup that fails with %s is a retryable %s error, and nothing is posted', async (error, kind) => {
    const t = question('C0ONCE007');
    slack.fail('conversations.replies', { error, retryAfterSeconds: 2 });
    const before = postsIn('C0ONCE007').length;
    const err = (await port.postChunk(t, 'chunk', 0, info(t, true)).catch((e: unknown) => e)) as PlatformError;
    expect(err).toBeInstanceOf(PlatformError);
    expect(err).toMatchObject({ source: 'slack', kind });
    expect(err.retryable || err.kind === 'rate_limited').toBe(true);
    expect(slack.callsOf('chat.postMessage', (c) => c.params.channel === 'C0ONCE007')).toHaveLength(before);
  });

  it('without a history scope the lookup fails naming the fix, and nothing is posted', async () => {
    const narrow = await startSlackEmulator({ users: [{ id: user, name: 'Uma' }], scopes: MANIFEST_SCOPES.filter((s) => s !== 'channels:history') });
    try {
      const m = narrow.userMessage({ channel: 'C0SCOPE01', user, text: 'q' });
      const t: ReplyTarget = { channelId: 'C0SCOPE01', threadId: m.ts, messageId: m.ts };
      const err = (await portFor(narrow).postChunk(t, 'chunk', 0, info(t, true)).catch((e: unknown) => e)) as PlatformError;
      expect(err).toMatchObject({ source: 'slack', kind: 'forbidden', code: 'missing_scope' });
      expect(err.message).toContain('reinstall');
      expect(narrow.callsOf('chat.postMessage')).toHaveLength(0);
    } finally {
      await narrow.close();
    }
  });

  it('when Slack cannot say who the bot is, nothing is looked up or posted', async () => {
    const fresh = await startSlackEmulator({ users: [{ id: user, name: 'Uma' }] });
    try {
      const m = fresh.userMessage({ channel: 'C0AUTH001', user, text: 'q' });
      const t: ReplyTarget = { channelId: 'C0AUTH001', threadId: m.ts, messageId: m.ts };
      fresh.fail('auth.test', { error: 'http_503' });
      const p = portFor(fresh);
      const err = (await p.postChunk(t, 'chunk', 0, info(t, true)).catch((e: unknown) => e)) as PlatformError;
      expect(err).toMatchObject({ source: 'slack', kind: 'server_error' });
      expect(fresh.callsOf('chat.postMessage')).toHaveLength(0);
      // The failure is not remembered: the retry asks again and posts.
      await p.postChunk(t, 'chunk', 0, info(t, true));
      expect(fresh.posted()).toHaveLength(1);
    } finally {
      await fresh.close();
    }
  });
});
