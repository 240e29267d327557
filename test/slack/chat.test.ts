import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, chatCalls, logLines, postsIn, say, startSlackBridge, until, W, type SlackHarness } from './harness.js';

/** Chat end to end over both transports: real Bolt, real Redis, the core worker, the agent emulator. */
describe.each(['http', 'socket'] as const)('Slack chat over %s', (mode) => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({ mode });
  });
  afterAll(async () => h?.close());

  const replyIn = (channel: string, threadTs: string | undefined, text?: RegExp) =>
    h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.channel === channel && c.params.thread_ts === threadTs && (!text || text.test(c.params.text ?? '')));

  it('answers a mention in a thread started on the message, with the agent text and a working reaction', async () => {
    const m = await say(h, { channel: W.general, text: `${botMention(h)} what is the plan?` });
    const post = await replyIn(W.general, m.ts);
    expect(post.params.text).toContain('[Demo Helper] You said:');
    expect(post.params.text).toContain('what is the plan?');
    expect(post.params.text).not.toContain(botMention(h));
    expect(post.params.unfurl_links).toBe('false');
    const call = chatCalls(h).find((c) => (c.json as { message?: string }).message === 'what is the plan?');
    expect(call).toBeDefined();
    // :eyes: while working, removed once the reply is up.
    expect(h.slack.callsOf('reactions.add', (c) => c.params.timestamp === m.ts && c.params.name === 'eyes')).toHaveLength(1);
    await h.slack.waitForCall('reactions.remove', (c) => c.params.timestamp === m.ts && c.params.name === 'eyes');
    expect(h.slack.reactionsOn(W.general, m.ts)).toEqual([]);
  });

  it('answers a DM inline, without a thread', async () => {
    const m = await say(h, { channel: W.dm, text: 'hello from a DM' });
    const post = await replyIn(W.dm, undefined, /hello from a DM/);
    expect(post.params.thread_ts).toBeUndefined();
    expect(m.ts).toBeTruthy();
  });

  it("treats a reply in an ordinary DM thread as a DM message, not as an assistant thread", async () => {
    const root = await say(h, { channel: W.dm, text: 'a DM to start a thread' });
    await replyIn(W.dm, undefined, /a DM to start a thread/);
    const reply = await say(h, { channel: W.dm, text: 'a reply in that DM thread', threadTs: root.ts });
    await h.slack.waitForCall('reactions.remove', (c) => c.params.timestamp === reply.ts, 15_000);
    expect(h.slack.callsOf('reactions.add', (c) => c.params.timestamp === reply.ts)).toHaveLength(1);
    // Its own text, not a transcript; no assistant status or title.
    expect(chatCalls(h).some((c) => (c.json as { message?: string }).message === 'a reply in that DM thread')).toBe(true);
    expect(h.slack.callsOf('assistant.threads.setStatus', (c) => c.params.thread_ts === root.ts)).toEqual([]);
    expect(h.slack.callsOf('assistant.threads.setTitle', (c) => c.params.thread_ts === root.ts)).toEqual([]);
  });

  it('answers a follow-up in its thread without a new mention', async () => {
    const root = await say(h, { channel: W.general, text: `${botMention(h)} first question` });
    await replyIn(W.general, root.ts, /first question/);
    await say(h, { channel: W.general, text: 'and a follow-up', threadTs: root.ts });
    const post = await replyIn(W.general, root.ts, /and a follow-up/);
    expect(post.params.thread_ts).toBe(root.ts);
    // An unaddressed top-level message in the same channel gets nothing.
    const before = chatCalls(h).length;
    await say(h, { channel: W.general, text: 'just chatting' });
    await until(() => logLines(h, /message dropped/).some((l) => l.reason === 'not_addressed'), 'not_addressed drop');
    expect(chatCalls(h).length).toBe(before);
  });

  it('answers every message in a channel bound with mode all', async () => {
    const channel = mode === 'http' ? 'C0ALLHTTP' : 'C0ALLSOCK';
    const bound = await h.to.command({ text: 'bind demo-poet all', user: W.admin, channel });
    expect(bound.acked).toBe(true);
    await h.slack.waitForCall('response_url', (c) => c.response.id === bound.responseUrlId);
    const m = await say(h, { channel, text: 'no mention here' });
    const post = await replyIn(channel, m.ts);
    expect(post.params.text).toContain('Demo Poet');
  });

  it('ignores its own messages and other bots', async () => {
    const before = chatCalls(h).length;
    const own = h.slack.userMessage({ channel: W.general, user: h.slack.identity.botUserId, text: `${botMention(h)} echo` });
    await h.to.event({ ...own.message, bot_id: h.slack.identity.botId });
    const other = h.slack.userMessage({ channel: W.general, user: 'UOTHERBOT', botId: 'BOTHER001', subtype: 'bot_message', text: `${botMention(h)} beep` });
    await h.to.event(other.message);
    await h.to.event(other.mention);
    await until(() => logLines(h, /message dropped/).filter((l) => l.reason === 'self' || l.reason === 'bot').length >= 2, 'self and bot drops');
    const m = await say(h, { channel: W.general, text: `${botMention(h)} sentinel after bots` });
    await replyIn(W.general, m.ts);
    expect(chatCalls(h).length).toBe(before + 1);
    expect(postsIn(h, W.general, own.ts)).toHaveLength(0);
    expect(postsIn(h, W.general, other.ts)).toHaveLength(0);
  });

  it('makes one job of a retried delivery', async () => {
    const before = chatCalls(h).length;
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} retried question` });
    const first = await h.to.event(m.mention, { eventId: 'EvRETRY1' + mode });
    expect(first.acked).toBe(true);
    await h.to.event(m.mention, { eventId: 'EvRETRY1' + mode, retryNum: 1, retryReason: 'http_timeout' });
    await h.to.event(m.mention, { eventId: 'EvRETRY1' + mode, retryNum: 2, retryReason: 'http_timeout' });
    await replyIn(W.general, m.ts);
    await until(() => logLines(h, /already handled/).filter((l) => l.messageId === `${W.general}:${m.ts}`).length >= 2, 'retries recognised');
    expect(chatCalls(h).length).toBe(before + 1);
    expect(postsIn(h, W.general, m.ts)).toHaveLength(1);
  });

  it('makes one reply of app_mention + message for the same ts', async () => {
    const before = chatCalls(h).length;
    const m = await say(h, { channel: W.general, text: `${botMention(h)} twice delivered` });
    await replyIn(W.general, m.ts);
    await until(() => logLines(h, /already handled/).some((l) => l.messageId === `${W.general}:${m.ts}`), 'second event recognised');
    expect(chatCalls(h).length).toBe(before + 1);
    expect(postsIn(h, W.general, m.ts)).toHaveLength(1);
  });

  it('sends the text of a message with an image and says once that the image was not sent', async () => {
    const m = await say(h, { channel: W.general, text: `${botMention(h)} see the file`, files: [{ id: 'F1', name: 'a.png', mimetype: 'image/png' }] });
    await replyIn(W.general, m.ts, /see the file/);
    const notices = postsIn(h, W.general, m.ts).filter((c) => /Not sent to the agent: a\.png \(only text files are sent\)/.test(c.params.text ?? ''));
    expect(notices).toHaveLength(1);
  });

  it('tells an unbound channel how to bind it, once per message', async () => {
    const m = await say(h, { channel: W.free, text: `${botMention(h)} anyone there?` });
    const notice = await replyIn(W.free, m.ts, /isn't connected/);
    expect(notice.params.text).toContain('/agent bind &lt;instance-id&gt;');
    await until(() => logLines(h, /already handled/).some((l) => l.messageId === `${W.free}:${m.ts}`), 'second event recognised');
    expect(postsIn(h, W.free, m.ts)).toHaveLength(1);
  });

  it('acknowledges events at once', async () => {
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} quick ack` });
    const ack = await h.to.event(m.mention);
    expect(ack.acked).toBe(true);
    expect(ack.ms).toBeLessThan(1_000);
    await replyIn(W.general, m.ts);
  });
});
