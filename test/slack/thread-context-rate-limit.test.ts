import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, chatCalls, postsIn, say, startSlackBridge, until, W, type SlackHarness } from './harness.js';

/**
 * Thread memory under a 429: when Slack rate-limits `conversations.replies` (read before the
 * agent call), the message waits for Retry-After and reads the thread again, instead of going
 * to the agent without the conversation. Other failures still degrade to the message alone.
 */
describe('thread context when conversations.replies is rate limited', () => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({ mode: 'http' });
    const r = await h.to.command({ text: 'set context thread', user: W.admin, channel: W.general });
    await h.slack.waitForCall('response_url', (c) => c.response.id === r.responseUrlId);
  });
  afterAll(async () => {
    await h?.close();
  });

  const messageOf = (c: { json?: unknown }) => String((c.json as { message?: string }).message);

  it('waits out a 429 and sends the thread with the message (one agent call)', async () => {
    const root = await say(h, { channel: W.general, text: `${botMention(h)} first question about the ledger` });
    await until(() => postsIn(h, W.general, root.ts).length >= 1, 'first answer');
    const before = h.slack.callsOf('conversations.replies').length;
    h.slack.fail('conversations.replies', { error: 'ratelimited', retryAfterSeconds: 1 });
    await say(h, { channel: W.general, text: `${botMention(h)} second question in that thread`, threadTs: root.ts });
    await until(() => chatCalls(h).some((c) => messageOf(c).includes('second question in that thread')), 'second agent call', 15_000);
    const calls = chatCalls(h).filter((c) => messageOf(c).includes('second question in that thread'));
    expect(calls).toHaveLength(1);
    expect(messageOf(calls[0]!)).toContain('first question about the ledger');
    expect(h.slack.callsOf('conversations.replies').slice(before).map((c) => c.status)).toEqual([429, 200]);
  });

  it('still answers with the message alone when the thread cannot be read for another reason', async () => {
    const root = await say(h, { channel: W.general, text: `${botMention(h)} opening words` });
    await until(() => postsIn(h, W.general, root.ts).length >= 1, 'first answer');
    h.slack.fail('conversations.replies', { error: 'internal_error' });
    await say(h, { channel: W.general, text: `${botMention(h)} follow-up without context`, threadTs: root.ts });
    await until(() => chatCalls(h).some((c) => messageOf(c).includes('follow-up without context')), 'agent call', 15_000);
    const call = chatCalls(h).find((c) => messageOf(c).includes('follow-up without context'))!;
    expect(messageOf(call)).not.toContain('opening words');
  });

  it("under Slack's non-Marketplace limits (15 a page, one read a window), answers with the first page instead of rereading forever", async () => {
    const root = await say(h, { channel: W.general, text: `${botMention(h)} the long thread starts here` });
    await until(() => postsIn(h, W.general, root.ts).length >= 1, 'first answer');
    for (let n = 1; n <= 20; n++) h.slack.userMessage({ channel: W.general, user: W.user, text: `filler ${n}`, threadTs: root.ts });
    h.slack.limitReads({ windowMs: 60_000 });
    try {
      const before = h.slack.callsOf('conversations.replies').length;
      await say(h, { channel: W.general, text: `${botMention(h)} the newest question`, threadTs: root.ts });
      await until(() => chatCalls(h).some((c) => messageOf(c).includes('the newest question')), 'the agent call', 15_000);
      const calls = chatCalls(h).filter((c) => messageOf(c).includes('the newest question'));
      expect(calls).toHaveLength(1);
      // The first page (the root and the replies after it) went with the question.
      expect(messageOf(calls[0]!)).toContain('the long thread starts here');
      expect(messageOf(calls[0]!)).toContain('filler 13');
      // One page read, the second refused, and no third try from the start.
      expect(h.slack.callsOf('conversations.replies').slice(before).map((c) => c.status)).toEqual([200, 429]);
    } finally {
      h.slack.limitReads(undefined);
    }
  });
});

describe('thread context Slack never lets the worker read', () => {
  let h: SlackHarness;
  beforeAll(async () => {
    // One attempt: the 429 budget is then 4 tries, a few seconds with Retry-After: 1.
    h = await startSlackBridge({ mode: 'http', env: { JOB_ATTEMPTS: '1' } });
    const r = await h.to.command({ text: 'set context thread', user: W.admin, channel: W.general });
    await h.slack.waitForCall('response_url', (c) => c.response.id === r.responseUrlId);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('says the thread could not be read when Slack keeps refusing it, not that the reply could not be posted', async () => {
    const root = await say(h, { channel: W.general, text: `${botMention(h)} another thread` });
    await until(() => postsIn(h, W.general, root.ts).length >= 1, 'first answer');
    h.slack.fail('conversations.replies', { error: 'ratelimited', retryAfterSeconds: 1, times: 50 });
    try {
      const before = chatCalls(h).length;
      await say(h, { channel: W.general, text: `${botMention(h)} never read`, threadTs: root.ts });
      const notice = await until(() => postsIn(h, W.general, root.ts).find((p) => /read the thread/.test(String(p.params.text))), 'the give-up notice', 20_000);
      expect(String(notice.params.text)).toContain('kept refusing to let me read the thread');
      expect(String(notice.params.text)).not.toContain('could not be posted');
      expect(chatCalls(h).length).toBe(before);
    } finally {
      h.slack.state.faults.delete('conversations.replies');
    }
  }, 30_000);
});
