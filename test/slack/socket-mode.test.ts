import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, say, startSlackBridge, W, type SlackHarness } from './harness.js';

describe('Slack Socket Mode', () => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({ mode: 'socket' });
  });
  afterAll(async () => h?.close());

  it('opens the connection through SLACK_API_URL with the app token', async () => {
    const open = h.slack.callsOf('apps.connections.open');
    expect(open.length).toBeGreaterThanOrEqual(1);
    expect(open[0]!.authorization).toBe(`Bearer ${h.slack.identity.appToken}`);
    expect(open[0]!.response.ok).toBe(true);
    // Every Web API call used the bot token.
    for (const c of h.slack.calls.filter((x) => x.method !== 'apps.connections.open' && x.method !== 'response_url')) {
      expect(c.authorization).toBe(`Bearer ${h.slack.identity.botToken}`);
    }
  });

  it('acks each envelope by its envelope_id', async () => {
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} acked?` });
    const ack = await h.to.event(m.mention);
    expect(ack.acked).toBe(true);
    expect(ack.ms).toBeLessThan(1_000);
    await h.slack.waitForCall('chat.postMessage', (c) => c.params.thread_ts === m.ts && c.response.ok === true);
  });

  it('reconnects after a disconnect message and keeps answering', async () => {
    const before = h.slack.socket.connections;
    h.slack.socket.disconnect('refresh_requested');
    await new Promise<void>((resolve) => {
      const check = (n: number) => (n > before ? (h.slack.state.off('socket_connected', check), resolve()) : undefined);
      h.slack.state.on('socket_connected', check);
    });
    expect(h.slack.callsOf('apps.connections.open').length).toBeGreaterThanOrEqual(2);
    const m = await say(h, { channel: W.general, text: `${botMention(h)} after the reconnect` });
    const post = await h.slack.waitForCall('chat.postMessage', (c) => c.params.thread_ts === m.ts && c.response.ok === true);
    expect(post.params.text).toContain('after the reconnect');
  });
});
