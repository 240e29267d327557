import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebClient } from '@slack/web-api';
import { MANIFEST_SCOPES, startSlackEmulator, type SlackEmulator } from '../emulators/slack/index.js';

/** Message metadata, reading conversations back, scopes and held answers: as strict as Slack. */
describe('Slack emulator: metadata, history, held answers', () => {
  let slack: SlackEmulator;
  let bot: WebClient;
  const metadata = (chunk: number) => ({ event_type: 'agent_bridge_reply', event_payload: { message_id: 'm1', chunk } });
  const raw = (method: string, args: Record<string, string>) =>
    fetch(`${slack.apiUrl}${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${slack.identity.botToken}` },
      body: new URLSearchParams(args).toString(),
    }).then(async (r) => (await r.json()) as Record<string, unknown>);

  beforeAll(async () => {
    slack = await startSlackEmulator({ users: [{ id: 'U0UMA0001', name: 'Uma' }] });
    bot = new WebClient(slack.identity.botToken, { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true });
  });
  afterAll(async () => slack.close());

  it('stores metadata sent by the Web API client (a JSON string in the form) and returns it only with include_all_metadata', async () => {
    const root = slack.userMessage({ channel: 'C0META001', user: 'U0UMA0001', text: 'question' });
    await bot.chat.postMessage({ channel: 'C0META001', thread_ts: root.ts, text: 'answer', metadata: metadata(0) });
    expect(slack.posted().at(-1)!.params.metadata).toBe(JSON.stringify(metadata(0)));

    const plain = await bot.conversations.replies({ channel: 'C0META001', ts: root.ts });
    expect(plain.messages?.map((m) => m.metadata)).toEqual([undefined, undefined]);
    const full = await bot.conversations.replies({ channel: 'C0META001', ts: root.ts, include_all_metadata: true });
    expect(full.messages?.[1]).toMatchObject({ text: 'answer', user: slack.identity.botUserId, bot_id: slack.identity.botId, metadata: metadata(0) });

    const dm = slack.userMessage({ channel: 'D0META001', user: 'U0UMA0001', text: 'in a DM' });
    await bot.chat.postMessage({ channel: 'D0META001', text: 'inline answer', metadata: metadata(1) });
    const history = await bot.conversations.history({ channel: 'D0META001', include_all_metadata: true, oldest: dm.ts });
    expect(history.messages).toEqual([expect.objectContaining({ text: 'inline answer', metadata: metadata(1) })]);
    expect((await bot.conversations.history({ channel: 'D0META001' })).messages?.map((m) => [m.text, m.metadata])).toEqual([
      ['inline answer', undefined],
      ['in a DM', undefined],
    ]);
  });

  it('refuses malformed metadata', async () => {
    expect(await raw('chat.postMessage', { channel: 'C0META001', text: 'x', metadata: 'not json' })).toMatchObject({ ok: false, error: 'invalid_metadata_format' });
    expect(await raw('chat.postMessage', { channel: 'C0META001', text: 'x', metadata: '{"event_payload":{}}' })).toMatchObject({ error: 'invalid_metadata_schema' });
    expect(await raw('chat.postMessage', { channel: 'C0META001', text: 'x', metadata: '{"event_type":"t","event_payload":[1]}' })).toMatchObject({ error: 'invalid_metadata_schema' });
  });

  it('pages with cursors, windows with oldest/latest/inclusive, keeps thread replies out of history', async () => {
    const root = slack.userMessage({ channel: 'C0PAGE001', user: 'U0UMA0001', text: 'root' });
    const replies = [];
    for (let i = 0; i < 5; i++) replies.push((await bot.chat.postMessage({ channel: 'C0PAGE001', thread_ts: root.ts, text: `r${i}` })).ts!);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = await bot.conversations.replies({ channel: 'C0PAGE001', ts: root.ts, limit: 2, ...(cursor ? { cursor } : {}) });
      seen.push(...(r.messages ?? []).map((m) => m.text!));
      cursor = r.response_metadata?.next_cursor || undefined;
      expect(r.has_more).toBe(Boolean(cursor));
      pages++;
    } while (cursor);
    expect(seen).toEqual(['root', 'r0', 'r1', 'r2', 'r3', 'r4']);
    expect(pages).toBe(3);

    const after = await bot.conversations.replies({ channel: 'C0PAGE001', ts: root.ts, oldest: replies[2]! });
    expect(after.messages?.map((m) => m.text)).toEqual(['r3', 'r4']);
    const inclusive = await bot.conversations.replies({ channel: 'C0PAGE001', ts: root.ts, oldest: replies[2]!, latest: replies[3]!, inclusive: true });
    expect(inclusive.messages?.map((m) => m.text)).toEqual(['r2', 'r3']);
    expect((await bot.conversations.history({ channel: 'C0PAGE001' })).messages?.map((m) => m.text)).toEqual(['root']);

    expect(await raw('conversations.replies', { channel: 'C0PAGE001', ts: root.ts, cursor: 'bm9wZQ==' })).toMatchObject({ error: 'invalid_cursor' });
    expect(await raw('conversations.replies', { channel: 'C0PAGE001', ts: root.ts, oldest: 'yesterday' })).toMatchObject({ error: 'invalid_ts_oldest' });
    expect(await raw('conversations.replies', { channel: 'C0PAGE001', ts: '1.000001' })).toMatchObject({ error: 'thread_not_found' });
    expect(await raw('conversations.history', { channel: 'C0PAGE001', include_metadata: 'true' })).toMatchObject({ error: 'invalid_arguments' });
    expect(await raw('conversations.history', { channel: 'nope' })).toMatchObject({ error: 'channel_not_found' });
  });

  it('answers missing_scope (needed, provided) when the token lacks the conversation kind’s history scope', async () => {
    // By default the token has what the manifest asks for.
    expect(MANIFEST_SCOPES).toEqual(expect.arrayContaining(['chat:write', 'channels:history', 'groups:history', 'im:history', 'mpim:history', 'reactions:write', 'users:read']));
    const narrow = await startSlackEmulator({ scopes: MANIFEST_SCOPES.filter((s) => s !== 'channels:history' && s !== 'im:history') });
    try {
      const client = new WebClient(narrow.identity.botToken, { slackApiUrl: narrow.apiUrl, retryConfig: { retries: 0 } });
      await expect(client.conversations.history({ channel: 'C0SCOPE01' })).rejects.toMatchObject({ data: { error: 'missing_scope', needed: 'channels:history' } });
      await expect(client.conversations.history({ channel: 'D0SCOPE01' })).rejects.toMatchObject({ data: { error: 'missing_scope', needed: 'im:history' } });
      expect((await client.conversations.history({ channel: 'G0SCOPE01' })).ok).toBe(true);
    } finally {
      await narrow.close();
    }
  });

  it('can store a post and hold its answer until released', async () => {
    const root = slack.userMessage({ channel: 'C0HOLD001', user: 'U0UMA0001', text: 'q' });
    slack.hold('chat.postMessage', { filter: (p) => p.channel === 'C0HOLD001' });
    let answered = false;
    const posting = bot.chat.postMessage({ channel: 'C0HOLD001', thread_ts: root.ts, text: 'held', metadata: metadata(0) }).then((r) => ((answered = true), r));
    const held = await slack.waitForHeld('chat.postMessage');
    // Stored and visible to readers while the poster still waits for its answer.
    expect(held.call).toMatchObject({ held: true, response: { ok: true } });
    const stored = await bot.conversations.replies({ channel: 'C0HOLD001', ts: root.ts, include_all_metadata: true });
    expect(stored.messages?.map((m) => m.text)).toEqual(['q', 'held']);
    expect(answered).toBe(false);
    held.release();
    expect((await posting).ts).toBe(held.call.response.ts);
    // One hold, one held call: the next post is answered at once.
    expect((await bot.chat.postMessage({ channel: 'C0HOLD001', thread_ts: root.ts, text: 'free' })).ok).toBe(true);
  });
});
