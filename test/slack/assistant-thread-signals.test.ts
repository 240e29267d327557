import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { postsIn, startSlackBridge, W, type SlackHarness } from './harness.js';

/**
 * What the user of an assistant thread sees while and after the agent works: a failure under the
 * error policy `reaction` is shown by the warning reaction (audit A, R4), and a bridge notice
 * posted into the thread while a message is in flight does not take "is thinking…" away until
 * the answer (R5; Slack clears the status line whenever the app posts in the thread, and the
 * emulator does too).
 */
describe('assistant thread signals', () => {
  /** Bound to demo-helper; its error policy is set per test. */
  const CHANNEL = 'C0SIGNALS';
  const MAX_CHARS = 200;
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({
      mode: 'http',
      env: { BINDINGS: `slack:${CHANNEL}=demo-helper,slack:dm=demo-helper`, MAX_MESSAGE_CHARS: String(MAX_CHARS) },
    });
  });
  afterEach(() => {
    h.agent.setDelay(0, { endpoint: 'chat' });
    h.slack.setLatency(undefined);
  });
  afterAll(async () => h?.close());

  async function agent(text: string) {
    const ack = await h.to.command({ text, user: W.admin, channel: CHANNEL });
    const call = await h.slack.waitForCall('response_url', (c) => c.response.id === ack.responseUrlId, 20_000);
    return String(call.params.text ?? '');
  }

  /** Opens an assistant thread in `dm` while the user looks at CHANNEL. */
  async function openThread(dm: string) {
    const started = h.slack.assistantThreadStarted({ user: W.user, dm, contextChannel: CHANNEL });
    await h.to.event(started.event);
    // The thread is remembered once its prompts are set; a message before that is a plain DM.
    await h.slack.waitForCall('assistant.threads.setSuggestedPrompts', (c) => c.params.thread_ts === started.threadTs, 20_000);
    return started.threadTs;
  }
  const thinking = (dm: string, threadTs: string) =>
    h.slack.waitForCall('assistant.threads.setStatus', (c) => c.params.channel_id === dm && c.params.thread_ts === threadTs && c.params.status !== '', 20_000);
  const reply = (dm: string, threadTs: string) =>
    h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.channel === dm && c.params.thread_ts === threadTs && /Demo Helper/.test(c.params.text ?? ''), 20_000);

  /** What the user sees on the status line, every 100 ms for `ms`. */
  async function watch(dm: string, threadTs: string, ms: number): Promise<string[]> {
    const seen: string[] = [];
    for (const end = Date.now() + ms; Date.now() < end; await sleep(100)) seen.push(h.slack.assistantStatus(dm, threadTs));
    return seen;
  }

  it('error policy `reaction`: a failed message gets the warning reaction, after its status is cleared, and no post', async () => {
    expect(await agent('set errors reaction')).toMatch(/reaction/);
    const dm = 'D0SIGNAL1';
    const threadTs = await openThread(dm);
    h.agent.failNext(1, { status: 400, body: { error: 'bad request' } }, { endpoint: 'chat' });
    const asked = h.slack.assistantMessage({ user: W.user, dm, threadTs, text: 'this one fails' });
    await h.to.event(asked.message);
    const warned = await h.slack.waitForCall('reactions.add', (c) => c.params.channel === dm && c.params.timestamp === asked.ts && c.params.name === 'warning', 15_000);
    const cleared = h.slack.callsOf('assistant.threads.setStatus', (c) => c.params.thread_ts === threadTs && c.params.status === '');
    expect(cleared).toHaveLength(1);
    expect(h.slack.calls.indexOf(cleared[0]!)).toBeLessThan(h.slack.calls.indexOf(warned));
    expect(h.slack.reactionsOn(dm, asked.ts)).toEqual(['warning']);
    expect(h.slack.assistantStatus(dm, threadTs)).toBe('');
    // "Only the warning reaction": nothing is posted in the thread.
    expect(postsIn(h, dm, threadTs)).toEqual([]);
    expect(await agent('set errors reply')).toMatch(/replies in plain words/);
  }, 60_000);

  it('keeps "is thinking…" up after a notice about another message of the thread (too long) until the answer', async () => {
    const dm = 'D0SIGNAL2';
    const threadTs = await openThread(dm);
    // Long enough that the answer comes well after the watch, even on a busy machine.
    h.agent.setDelay(5_000, { endpoint: 'chat' });
    await h.to.event(h.slack.assistantMessage({ user: W.user, dm, threadTs, text: 'a slow question' }).message);
    await thinking(dm, threadTs);
    await h.to.event(h.slack.assistantMessage({ user: W.user, dm, threadTs, text: 'x'.repeat(MAX_CHARS + 1) }).message);
    const notice = await h.slack.waitForCall('chat.postMessage', (c) => c.params.channel === dm && c.params.thread_ts === threadTs && /characters long/.test(c.params.text ?? ''), 15_000);
    expect(notice.response.ok).toBe(true);
    await sleep(200);
    expect((await watch(dm, threadTs, 1_200)).filter((s) => s !== 'is thinking…')).toEqual([]);
    await reply(dm, threadTs);
    expect(h.slack.assistantStatus(dm, threadTs)).toBe('');
  }, 60_000);

  it('keeps "is thinking…" up after the files notice lands behind it (Slack is not 1 ms away) until the answer', async () => {
    const dm = 'D0SIGNAL3';
    const threadTs = await openThread(dm);
    h.agent.setDelay(6_000, { endpoint: 'chat' });
    // The notice's post takes two seconds: the worker's status is set before it lands.
    h.slack.setLatency((method, params) => (method === 'chat.postMessage' && /^Not sent/.test(params.text ?? '') ? 2_000 : 0));
    const image = h.slack.files.add({ name: 'cat.png', mimetype: 'image/png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47]) });
    await h.to.event(h.slack.assistantMessage({ user: W.user, dm, threadTs, text: 'what is in this picture?', files: [image] }).message);
    const shown = await thinking(dm, threadTs);
    const notice = await h.slack.waitForCall('chat.postMessage', (c) => c.params.channel === dm && /^Not sent/.test(c.params.text ?? ''), 15_000);
    expect(notice.response.ok).toBe(true);
    expect(h.slack.calls.indexOf(shown)).toBeLessThan(h.slack.calls.indexOf(notice));
    await sleep(200);
    expect((await watch(dm, threadTs, 1_500)).filter((s) => s !== 'is thinking…')).toEqual([]);
    await reply(dm, threadTs);
    expect(h.slack.assistantStatus(dm, threadTs)).toBe('');
  }, 60_000);
});
