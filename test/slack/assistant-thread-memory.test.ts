import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { REPLY_EVENT_TYPE } from '../../adapters/slack/posted-chunks.js';
import { chatCalls, startSlackBridge, until, W, type SlackHarness } from './harness.js';

/**
 * An assistant thread's memory, through the real Bolt app, ingress, queue and worker against
 * the Slack emulator (whose assistant-thread root is the user's `assistant_app_thread` message,
 * as Slack documents it): the transcript comes from the bridge's own record, not from a
 * `conversations.replies` read per message (one a minute per workspace for apps outside the
 * Marketplace); a thread whose start the bridge missed is still recognised; the transcript
 * holds only the people's and the agent's words; the title is plain text cut whole; a
 * context change brings the new channel's prompts.
 */
describe('Slack assistant thread memory', () => {
  let h: SlackHarness;
  let redis: Redis;
  beforeAll(async () => {
    h = await startSlackBridge({ mode: 'http' });
    redis = new Redis('redis://127.0.0.1:6379');
  });
  afterAll(async () => {
    await redis?.quit();
    await h?.close();
  });

  const messageOf = (c: { json?: unknown }) => String((c.json as { message?: string }).message);
  const agentGot = (pattern: RegExp, timeoutMs?: number) =>
    until(() => chatCalls(h).find((c) => pattern.test(messageOf(c))), `agent call matching ${pattern}`, timeoutMs);
  const answered = (dm: string, threadTs: string, pattern: RegExp, timeoutMs?: number) =>
    until(
      () => h.slack.posted((c) => c.params.channel === dm && c.params.thread_ts === threadTs && pattern.test(c.params.text ?? '')).length > 0,
      `answer matching ${pattern} in ${dm}`,
      timeoutMs,
    );
  /** Opens the assistant and waits until the bridge has the thread (its prompts are set). */
  const open = async (dm: string, user: string = W.user, contextChannel: string = W.general) => {
    const started = h.slack.assistantThreadStarted({ user, dm, contextChannel });
    await h.to.event(started.event);
    await h.slack.waitForCall('assistant.threads.setSuggestedPrompts', (c) => c.params.thread_ts === started.threadTs);
    return started.threadTs;
  };
  const ask = (dm: string, threadTs: string, text: string, user: string = W.user, files?: Record<string, unknown>[]) =>
    h.to.event(h.slack.assistantMessage({ user, dm, threadTs, text, ...(files ? { files } : {}) }).message);
  const readsOf = (dm: string) => h.slack.callsOf('conversations.replies', (c) => c.params.channel === dm);

  it("answers several people's assistant threads at agent speed under Slack's one-read-a-minute limit, without reading them back", async () => {
    const people = [W.user, W.admin, W.owner];
    const dms = ['D0MEMA001', 'D0MEMA002', 'D0MEMA003'];
    const threads = [];
    for (const [i, dm] of dms.entries()) threads.push(await open(dm, people[i]));
    h.slack.limitReads({ windowMs: 60_000, pageSize: 15 });
    try {
      const t0 = Date.now();
      for (const [i, dm] of dms.entries()) await ask(dm, threads[i]!, `question ${i + 1} about the rollout`, people[i]);
      // Before: the first read took the minute's one read; the others waited 60 and 120 s.
      for (const [i, dm] of dms.entries()) await answered(dm, threads[i]!, new RegExp(`question ${i + 1}`), 10_000);
      const firstRound = Date.now() - t0;
      for (const [i, dm] of dms.entries()) await ask(dm, threads[i]!, `and a follow-up ${i + 1}?`, people[i]);
      for (const [i, dm] of dms.entries()) await answered(dm, threads[i]!, new RegExp(`follow-up ${i + 1}`), 10_000);
      // The follow-up still has the thread's memory: the question and the agent's answer.
      const follow = await agentGot(/and a follow-up 2\?/);
      expect(messageOf(follow)).toContain('Ada Admin: question 2 about the rollout');
      expect(messageOf(follow)).toMatch(/agent \(bot\): \[Demo Helper\] You said:.*question 2 about the rollout/);
      expect(messageOf(follow)).not.toMatch(/question [13]/);
      for (const dm of dms) expect(readsOf(dm)).toEqual([]);
      expect(firstRound).toBeLessThan(10_000);
    } finally {
      h.slack.limitReads(undefined);
    }
  });

  it('answers with the turns it recorded when Slack rate-limits reading a thread it has no whole record of', async () => {
    const dm = 'D0MEMA004';
    const threadTs = await open(dm);
    await ask(dm, threadTs, 'first words here');
    await answered(dm, threadTs, /first words here/);
    // A thread whose record does not go back to its start (kept before there was a record).
    await redis.hdel(`${h.prefix}:chat:slack:assistant:${dm}:${threadTs}`, 'log');
    h.slack.fail('conversations.replies', { error: 'ratelimited', retryAfterSeconds: 60 });
    try {
      await ask(dm, threadTs, 'second words here');
      // Before: the message waited out the minute and read the thread again.
      const call = await agentGot(/second words here/, 10_000);
      expect(messageOf(call)).toContain('Uma User: first words here');
      expect(messageOf(call)).toMatch(/agent \(bot\): \[Demo Helper\] You said:.*first words here/);
      expect(readsOf(dm).map((c) => c.status)).toEqual([429]);
    } finally {
      h.slack.state.faults.delete('conversations.replies');
    }
  });

  it("tells the agent only the people's and the agent's words, with the new speaker named", async () => {
    const dm = 'D0MEMB001';
    const threadTs = await open(dm);
    const image = h.slack.files.add({ name: 'diagram.png', mimetype: 'image/png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47]) });
    await ask(dm, threadTs, 'what is in this picture?', W.user, [image]);
    await answered(dm, threadTs, /what is in this picture/);
    // The bridge's own notice is in the thread, but it is not the agent's answer.
    expect(h.slack.posted((c) => c.params.channel === dm && /Not sent to the agent: diagram\.png/.test(c.params.text ?? ''))).toHaveLength(1);
    await ask(dm, threadTs, 'and what colour is it?');
    const call = await agentGot(/and what colour is it\?/);
    const lines = messageOf(call).split('\n');
    expect(lines[0]).toBe('Earlier messages in this thread:');
    expect(lines[1]).toBe('Uma User: what is in this picture?');
    expect(lines[2]).toMatch(/^agent \(bot\): \[Demo Helper\]/);
    expect(messageOf(call)).not.toContain('Not sent to the agent');
    // Slack's root (the thread's title, written as the user) is not a turn.
    expect(messageOf(call)).not.toContain('Chats from');
    expect(messageOf(call)).toContain('\n\nNew message from Uma User:\nand what colour is it?');
  });

  it('recognises an assistant thread whose start it never saw, from its root, reading it once', async () => {
    const dm = 'D0MEMC001';
    // The bridge was down when the user opened the assistant: the event never arrives. The
    // thread also has an earlier exchange the bridge no longer remembers, with a notice of its own.
    const started = h.slack.assistantThreadStarted({ user: W.user, dm, contextChannel: W.general });
    const threadTs = started.threadTs;
    const bot = h.slack.identity;
    const earlierTs = [h.slack.state.nextTs(), h.slack.state.nextTs(), h.slack.state.nextTs()];
    h.slack.state.addMessage({ ts: earlierTs[0]!, channel: dm, thread_ts: threadTs, user: W.user, text: 'what does the cache key include?', reactions: new Map() });
    h.slack.state.addMessage({
      ts: earlierTs[1]!,
      channel: dm,
      thread_ts: threadTs,
      user: bot.botUserId,
      bot_id: bot.botId,
      text: 'The tenant and the locale.',
      metadata: { event_type: REPLY_EVENT_TYPE, event_payload: { message_id: earlierTs[0]!, chunk: 0 } },
      reactions: new Map(),
    });
    h.slack.state.addMessage({ ts: earlierTs[2]!, channel: dm, thread_ts: threadTs, user: bot.botUserId, bot_id: bot.botId, text: 'Not sent to the agent: cat.png (only text files are sent).', reactions: new Map() });

    const first = h.slack.assistantMessage({ user: W.user, dm, threadTs, text: 'and the region?' });
    await h.to.event(first.message);
    await answered(dm, threadTs, /and the region/);
    // The assistant's status line, not a DM's :eyes:, and the thread gets its title.
    expect(h.slack.callsOf('assistant.threads.setStatus', (c) => c.params.thread_ts === threadTs && c.params.status === 'is thinking…')).toHaveLength(1);
    expect(h.slack.callsOf('reactions.add', (c) => c.params.channel === dm)).toEqual([]);
    const title = await h.slack.waitForCall('assistant.threads.setTitle', (c) => c.params.thread_ts === threadTs);
    expect(title.params.title).toBe('and the region?');
    const call = await agentGot(/and the region\?/);
    expect(messageOf(call)).toBe(
      'Earlier messages in this thread:\nUma User: what does the cache key include?\nagent (bot): The tenant and the locale.\n\nNew message from Uma User:\nand the region?',
    );

    await ask(dm, threadTs, 'and the currency?');
    const second = await agentGot(/and the currency\?/);
    expect(messageOf(second)).toContain('Uma User: and the region?');
    expect(messageOf(second)).toMatch(/agent \(bot\): \[Demo Helper\] You said:.*and the region\?/);
    // One read told the thread apart; its record answered from then on.
    expect(readsOf(dm)).toHaveLength(1);
  });

  it('keeps a reply in an ordinary DM thread an ordinary DM message, reading that thread once', async () => {
    const dm = 'D0MEMD001';
    const root = h.slack.userMessage({ channel: dm, user: W.user, text: 'a note to self', channelType: 'im' });
    await h.to.event(root.message);
    await until(() => h.slack.posted((c) => c.params.channel === dm && /a note to self/.test(c.params.text ?? '')).length > 0, 'the DM answer');
    const reply = h.slack.userMessage({ channel: dm, user: W.user, text: 'more in the thread', threadTs: root.ts, channelType: 'im' });
    await h.to.event(reply.message);
    await until(() => h.slack.posted((c) => c.params.channel === dm && /more in the thread/.test(c.params.text ?? '')).length > 0, 'the thread answer');
    expect(h.slack.callsOf('reactions.add', (c) => c.params.timestamp === reply.ts)).toHaveLength(1);
    expect(h.slack.callsOf('assistant.threads.setStatus', (c) => c.params.channel_id === dm)).toEqual([]);
    const again = h.slack.userMessage({ channel: dm, user: W.user, text: 'and again', threadTs: root.ts, channelType: 'im' });
    await h.to.event(again.message);
    await until(() => h.slack.posted((c) => c.params.channel === dm && /and again/.test(c.params.text ?? '')).length > 0, 'the second thread answer');
    expect(readsOf(dm)).toHaveLength(1);
  });

  it('titles the thread with the plain text of the first message, cut whole', async () => {
    const links = 'D0MEME001';
    const linksTs = await open(links);
    await ask(links, linksTs, 'read <https://example.com/spec|the spec> &amp; <#C0GENERAL|general>');
    const plain = await h.slack.waitForCall('assistant.threads.setTitle', (c) => c.params.thread_ts === linksTs);
    expect(plain.params.title).toBe('read the spec (https://example.com/spec) & #general');

    const emoji = 'D0MEME002';
    const emojiTs = await open(emoji);
    await ask(emoji, emojiTs, `${'a'.repeat(58)}😀 and the rest of a long question`);
    const cut = await h.slack.waitForCall('assistant.threads.setTitle', (c) => c.params.thread_ts === emojiTs);
    // Before: `slice` split the emoji's surrogate pair, and the form encoding made 🐦 of it.
    expect(cut.params.title).toBe(`${'a'.repeat(58)}😀…`);
  });

  it("keeps the thread's turns as long as the record that says they are the whole thread", async () => {
    const dm = 'D0MEMF002';
    const threadTs = await open(dm);
    await ask(dm, threadTs, 'remember this');
    await answered(dm, threadTs, /remember this/);
    const record = `${h.prefix}:chat:slack:assistant:${dm}:${threadTs}`;
    const turns = `${h.prefix}:chat:slack:assistant-turns:${dm}:${threadTs}`;
    // Weeks later, only the context changes (the user looks at another channel).
    await redis.expire(record, 100);
    await redis.expire(turns, 100);
    await h.to.event(h.slack.assistantContextChanged({ user: W.user, dm, threadTs, contextChannel: W.free }));
    let ttls: number[] = [];
    await until(() => {
      void Promise.all([redis.ttl(record), redis.ttl(turns)]).then((t) => (ttls = t));
      return ttls[0] !== undefined && ttls[0] > 100;
    }, 'the record kept longer');
    // Before: the record lived on and its turns expired, leaving a "whole" record with none.
    expect(ttls[1]).toBeGreaterThan(100);
  });

  it("suggests the new channel's prompts when the user looks at another channel", async () => {
    const poet = 'C0MEMPOET';
    const bound = await h.to.command({ text: 'bind demo-poet', user: W.admin, channel: poet });
    await h.slack.waitForCall('response_url', (c) => c.response.id === bound.responseUrlId);
    await redis.hset(`${h.prefix}:chat:prompts`, `slack:${poet}`, JSON.stringify(['Write a haiku']));
    const dm = 'D0MEMF001';
    const threadTs = await open(dm);
    await h.to.event(h.slack.assistantContextChanged({ user: W.user, dm, threadTs, contextChannel: poet }));
    const calls = await h.slack.waitForCalls('assistant.threads.setSuggestedPrompts', (c) => c.params.thread_ts === threadTs, 2);
    expect(JSON.parse(calls[1]!.params.prompts!)).toEqual([{ title: 'Write a haiku', message: 'Write a haiku' }]);
  });
});
