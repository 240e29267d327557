import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
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
});
