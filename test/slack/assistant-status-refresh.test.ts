import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { startSlackBridge, until, W, type SlackHarness } from './harness.js';

/**
 * Slack removes an assistant thread's "is thinking…" two minutes after it was set if nothing
 * was posted; an answer may take longer. The bridge sets it again while the agent works, and
 * stops once the reply is posted or the message fails. Here the emulator's expiry is 800 ms
 * and the refresh every 300 ms (Slack: 120 s, the bridge: 90 s).
 */
describe('the assistant status line through a slow answer', () => {
  const EXPIRY_MS = 800;
  const REFRESH_MS = 300;
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({ mode: 'http', emulator: { assistantStatusExpiryMs: EXPIRY_MS }, replyPort: { statusRefreshMs: REFRESH_MS } });
  });
  afterEach(() => {
    h.agent.setDelay(0, { endpoint: 'chat' });
    h.slack.releaseHeld();
  });
  afterAll(async () => {
    await h?.close();
  });

  /** Opens an assistant thread in `dm` and asks in it while the agent takes `agentMs`. */
  async function askSlowly(dm: string, text: string, agentMs: number) {
    const started = h.slack.assistantThreadStarted({ user: W.user, dm, contextChannel: W.general });
    await h.to.event(started.event);
    // Slack has its ack before the listener runs; the prompts come once the thread is remembered.
    await h.slack.waitForCall('assistant.threads.setSuggestedPrompts', (c) => c.params.thread_ts === started.threadTs);
    h.agent.setDelay(agentMs, { endpoint: 'chat' });
    await h.to.event(h.slack.assistantMessage({ user: W.user, dm, threadTs: started.threadTs, text }).message);
    await h.slack.waitForCall('assistant.threads.setStatus', (c) => c.params.thread_ts === started.threadTs && c.params.status !== '');
    return started.threadTs;
  }
  const statusCalls = (threadTs: string) => h.slack.callsOf('assistant.threads.setStatus', (c) => c.params.thread_ts === threadTs);
  const reply = (dm: string, threadTs: string) => h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.channel === dm && c.params.thread_ts === threadTs, 15_000);

  /** What the user sees, every 100 ms for `ms`. */
  async function watch(dm: string, threadTs: string, ms: number): Promise<string[]> {
    const seen: string[] = [];
    for (const end = Date.now() + ms; Date.now() < end; await sleep(100)) seen.push(h.slack.assistantStatus(dm, threadTs));
    return seen;
  }

  it('keeps "is thinking…" up past Slack\'s expiry while the agent works, and stops refreshing once the reply is posted', async () => {
    const dm = 'D0REFRESH1';
    const threadTs = await askSlowly(dm, 'a slow question', 2_500);
    const seen = await watch(dm, threadTs, 2 * EXPIRY_MS);
    expect(seen.filter((s) => s !== 'is thinking…')).toEqual([]);
    await reply(dm, threadTs);
    const afterReply = statusCalls(threadTs).length;
    await sleep(3 * REFRESH_MS);
    expect(statusCalls(threadTs)).toHaveLength(afterReply);
    expect(h.slack.assistantStatus(dm, threadTs)).toBe('');
  });

  it('stops refreshing when the message fails, and the cleared status stays cleared', async () => {
    const dm = 'D0REFRESH2';
    h.agent.failNext(1, { status: 400, body: { error: 'bad request' } }, { endpoint: 'chat' });
    const threadTs = await askSlowly(dm, 'a slow question that fails', 2 * EXPIRY_MS);
    expect((await watch(dm, threadTs, EXPIRY_MS + REFRESH_MS)).filter((s) => s !== 'is thinking…')).toEqual([]);
    await h.slack.waitForCall('assistant.threads.setStatus', (c) => c.params.thread_ts === threadTs && c.params.status === '', 10_000);
    const afterClear = statusCalls(threadTs).length;
    await sleep(3 * REFRESH_MS);
    expect(statusCalls(threadTs)).toHaveLength(afterClear);
    expect(statusCalls(threadTs).at(-1)!.params.status).toBe('');
    expect(h.slack.assistantStatus(dm, threadTs)).toBe('');
  });

  it('posts the reply on time when Slack refuses a refresh or never answers one', async () => {
    const dm = 'D0REFRESH3';
    const threadTs = await askSlowly(dm, 'a question while Slack is slow', 2_000);
    const first = statusCalls(threadTs).length;
    h.slack.fail('assistant.threads.setStatus', { error: 'ratelimited', retryAfterSeconds: 30 });
    await until(() => statusCalls(threadTs).length >= first + 1, 'a refused refresh');
    // The next refresh is never answered: it must not hold up the reply.
    h.slack.hold('assistant.threads.setStatus');
    await until(() => statusCalls(threadTs).length >= first + 2, 'a held refresh');
    const posted = await reply(dm, threadTs);
    expect(posted.params.text).toMatch(/a question while Slack is slow/);
    const asked = h.agent.calls.find((c) => c.endpoint === 'chat' && /while Slack is slow/.test(String((c.json as { message?: string }).message)))!;
    // The agent answered after 2 s; posting it took no refresh's time.
    expect(posted.at - asked.at).toBeLessThan(2_000 + 1_500);
  });
});
