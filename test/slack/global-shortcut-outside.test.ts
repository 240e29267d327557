import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatCalls, startSlackBridge, W, type SlackHarness } from './harness.js';
import { askOnAMessage } from '../../adapters/slack/ask-shortcut.js';

/**
 * Global shortcuts (`type: shortcut`): no channel, no message, no response_url, only a trigger_id
 * good for one views.open within 3 s. "Ask the agent" set up as one (in the app's settings
 * instead of as a message shortcut) was never acknowledged: Slack waited 3 s and showed the user
 * an error. Now it is acked at once and a note says where the shortcut works.
 */
describe.each(['http', 'socket'] as const)('global shortcuts over %s', (mode) => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({ mode });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('"Ask the agent" as a global shortcut: acked at once, a note opened with its trigger, no agent call', async () => {
    const calls = chatCalls(h).length;
    const shortcut = h.slack.globalShortcut({ user: W.user, callbackId: 'ask_agent' });
    const sent = await h.to.interaction(shortcut);
    expect(sent.acked).toBe(true);
    const opened = await h.slack.waitForCall('views.open', (c) => c.params.trigger_id === shortcut.trigger_id, 10_000);
    expect(opened.response.ok).toBe(true);
    expect(String(opened.params.view)).toContain('More actions menu');
    expect(askOnAMessage).toContain('Ask the agent works on a message');
    expect(chatCalls(h).length).toBe(calls);
  });

  it('a global shortcut the bridge does not know: acked, nothing else', async () => {
    const sent = await h.to.interaction(h.slack.globalShortcut({ user: W.user, callbackId: 'someone_elses' }));
    expect(sent.acked).toBe(true);
  });
});
