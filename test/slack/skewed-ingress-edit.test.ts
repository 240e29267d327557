import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { chatCalls, logLines, postsIn, startSlackBridge, until, W, type SlackHarness } from './harness.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * In socket mode: over HTTP, Bolt itself refuses a request signed more than 5 minutes off the
 * ingress's clock (Slack's replay protection; docs/operations.md). An ingress whose clock is minutes off Slack's (a VM resumed from pause, a host without NTP):
 * the edit of a question sent a second ago, delivered before the question, is still kept, so
 * the secret edited out never reaches the agent. Only this process's clock is moved, and only
 * while the edit is handled (the emulator's message time is taken before).
 */
describe('Slack: an edit delivered before its message, on an ingress whose clock is 11 min ahead', () => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({ mode: 'socket' });
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await h?.close();
  });
  const calledWith = (text: string) => chatCalls(h).filter((c) => (c.json as { message?: string }).message?.includes(text));

  it('the agent is asked the edited text once, never the secret', async () => {
    const m = h.slack.userMessage({ channel: W.dm, user: W.user, text: 'log in with password hunter2' });
    const real = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => real() + Number(process.env.SKEW_MS ?? 11 * 60_000));
    try {
      await h.to.event(h.slack.editMessage(W.dm, m.ts, 'log in with password [removed]'));
      await until(() => logLines(h, /edited before it was stored/).length >= 1, 'the edit handled', 3_000).catch(() => undefined);
    } finally {
      vi.restoreAllMocks();
    }
    await h.to.event(m.message);
    await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && String(c.params.text).includes('log in with password'), 15_000);
    await sleep(300);
    expect(calledWith('hunter2')).toEqual([]);
    expect(calledWith('[removed]')).toHaveLength(1);
    const posts = postsIn(h, W.dm, undefined).map((c) => String(c.params.text));
    expect(posts).toHaveLength(1);
    expect(posts[0]).toContain('log in with password [removed]');
  });
});
