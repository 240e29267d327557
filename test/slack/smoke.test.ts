import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSlackBridge, say, botMention, W, type SlackHarness } from './harness.js';

describe.each(['http', 'socket'] as const)('smoke %s', (mode) => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({ mode });
  });
  afterAll(async () => h?.close());
  it('answers a mention in the thread', async () => {
    const m = await say(h, { channel: W.general, text: `${botMention(h)} hello there` });
    const post = await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true);
    console.log(post.params, h.slack.calls.map((c) => c.method));
    expect(post.params.thread_ts).toBe(m.ts);
  });
});
