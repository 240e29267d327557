import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSlackBridge, W, type SlackHarness } from './harness.js';

/**
 * Slack redelivers an event it thinks was not acked in time (same event_id, X-Slack-Retry-Num
 * or Socket Mode retry_attempt): a redelivered `assistant_thread_started` is claimed in the
 * seen ledger once, so the suggested prompts are set once.
 */
describe.each(['http', 'socket'] as const)('a redelivered assistant_thread_started over %s', (mode) => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({ mode });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('sets the suggested prompts once', async () => {
    const dm = mode === 'http' ? 'D0REDLH01' : 'D0REDLS01';
    const started = h.slack.assistantThreadStarted({ user: W.user, dm, contextChannel: W.general });
    const promptsIn = () => h.slack.callsOf('assistant.threads.setSuggestedPrompts', (c) => c.params.channel_id === dm);
    expect((await h.to.event(started.event, { eventId: `EvATS${mode}` })).acked).toBe(true);
    await h.slack.waitForCall('assistant.threads.setSuggestedPrompts', (c) => c.params.channel_id === dm);
    expect((await h.to.event(started.event, { eventId: `EvATS${mode}`, retryNum: 1, retryReason: 'http_timeout' })).acked).toBe(true);
    await new Promise((r) => setTimeout(r, 1000));
    expect(promptsIn()).toHaveLength(1);
    // Another thread in the same DM is a new start.
    const next = h.slack.assistantThreadStarted({ user: W.user, dm, contextChannel: W.general });
    await h.to.event(next.event);
    await h.slack.waitForCalls('assistant.threads.setSuggestedPrompts', (c) => c.params.channel_id === dm, 2);
  });
});
