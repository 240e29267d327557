import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { THREAD_GAP_LINE, UNREADABLE_THREAD_NOTE } from '../../src/worker/thread-context.js';
import { botMention, chatCalls, postsIn, say, startSlackBridge, until, W, type SlackHarness } from './harness.js';

/**
 * Thread memory under a 429: when Slack rate-limits `conversations.replies` (read before the
 * agent call), the message waits for Retry-After once and reads the thread again; refused again,
 * it goes to the agent without the thread, the agent told so. Other failures degrade to the
 * message alone at once.
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
      // The first page (the root and the replies after it) went with the question, and the
      // agent is told that the newest part, just before the question, could not be read.
      expect(messageOf(calls[0]!)).toContain('the long thread starts here');
      expect(messageOf(calls[0]!)).toContain('filler 13');
      expect(messageOf(calls[0]!)).not.toContain('filler 14');
      expect(messageOf(calls[0]!)).toMatch(new RegExp(`filler 13\n${THREAD_GAP_LINE.replace(/[()]/g, '\\$&')}\n\nNew message from`));
      // One page read, the second refused, and no third try from the start.
      expect(h.slack.callsOf('conversations.replies').slice(before).map((c) => c.status)).toEqual([200, 429]);
    } finally {
      h.slack.limitReads(undefined);
    }
  });

  it('a burst of threaded questions under a one-read-a-window limit: each answered once, in about two windows, without a herd of refused reads', async () => {
    const roots: Array<Awaited<ReturnType<typeof say>>> = [];
    for (let i = 0; i < 8; i++) roots.push(await say(h, { channel: W.general, text: `${botMention(h)} burst root ${i}` }));
    await until(() => roots.every((r) => postsIn(h, W.general, r.ts).length >= 1), 'the roots answered', 20_000);
    // The test before left the workspace's reads closed for Slack's minute: a new window here.
    await h.bridge.redis.del(`${h.prefix}:chat:slack:thread-reads-limited:token`);
    h.slack.limitReads({ windowMs: 1_500 });
    try {
      const before = h.slack.callsOf('conversations.replies').length;
      await Promise.all(roots.map((r, i) => say(h, { channel: W.general, text: `${botMention(h)} burst follow-up ${i}`, threadTs: r.ts })));
      const asked = (i: number) => chatCalls(h).filter((c) => messageOf(c).includes(`burst follow-up ${i}`));
      await until(() => roots.every((_, i) => asked(i).length >= 1), 'every follow-up sent to the agent', 30_000);
      await until(() => roots.every((r, i) => postsIn(h, W.general, r.ts).some((p) => String(p.params.text).includes(`burst follow-up ${i}`))), 'every follow-up answered', 15_000);
      for (let i = 0; i < roots.length; i++) {
        expect(asked(i)).toHaveLength(1);
        // With its thread, or told plainly that the thread could not be read.
        const prompt = messageOf(asked(i)[0]!);
        expect(prompt.includes(`burst root ${i}`) || prompt.startsWith(UNREADABLE_THREAD_NOTE), prompt).toBe(true);
      }
      // Before: each job asked Slack again on every retry (28 refused reads for 8 questions, answered one a window).
      const refused = h.slack.callsOf('conversations.replies').slice(before).filter((c) => c.status === 429);
      expect(refused.length).toBeLessThanOrEqual(2 * roots.length);
    } finally {
      h.slack.limitReads(undefined);
    }
  }, 60_000);
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

  const messageOf = (c: { json?: unknown }) => String((c.json as { message?: string }).message);

  it('answers without the thread, the agent told so, when Slack still refuses it after one wait', async () => {
    const root = await say(h, { channel: W.general, text: `${botMention(h)} another thread` });
    await until(() => postsIn(h, W.general, root.ts).length >= 1, 'first answer');
    h.slack.fail('conversations.replies', { error: 'ratelimited', retryAfterSeconds: 1, times: 50 });
    try {
      const before = h.slack.callsOf('conversations.replies').length;
      await say(h, { channel: W.general, text: `${botMention(h)} never read`, threadTs: root.ts });
      const call = await until(() => chatCalls(h).find((c) => messageOf(c).includes('never read')), 'the agent call', 20_000);
      expect(messageOf(call)).toBe(`${UNREADABLE_THREAD_NOTE}\n\nnever read`);
      await until(() => postsIn(h, W.general, root.ts).some((p) => /never read/.test(String(p.params.text))), 'the answer');
      // Answered, not given up on (before: "this chat kept refusing to let me read the thread").
      expect(postsIn(h, W.general, root.ts).filter((p) => /kept refusing|wasn't answered/.test(String(p.params.text)))).toEqual([]);
      // One refused read, one after the wait; none while the wait ran.
      expect(h.slack.callsOf('conversations.replies').slice(before).map((c) => c.status)).toEqual([429, 429]);
    } finally {
      h.slack.state.faults.delete('conversations.replies');
    }
  }, 30_000);
});
