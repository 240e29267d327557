import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Delivery } from '../emulators/slack/index.js';
import { startRedisStallProxy, type RedisStallProxy } from '../support/redis-stall-proxy.js';
import { W, botMention, postsIn, say, startSlackBridge, until, type SlackHarness, type SlackMode } from './harness.js';

/**
 * Slack's ack of an event is its promise not to send it again: a 200 over HTTP, an envelope
 * ack over Socket Mode (an unacked envelope is redelivered). The bridge gives it only once the
 * message is stored, so a bridge killed right after the ack loses nothing. Redis is stalled for
 * this bridge alone (a proxy), which widens the moment between the two.
 */
describe.each<SlackMode>(['http', 'socket'])('Slack (%s): a message is acknowledged once it is stored', (mode) => {
  let h: SlackHarness;
  let proxy: RedisStallProxy;
  const acked = (d: Delivery) => (mode === 'http' ? d.status === 200 : d.acked === true);

  beforeAll(async () => {
    proxy = await startRedisStallProxy();
    h = await startSlackBridge({ mode, env: { REDIS_URL: proxy.url } });
    // Warm up: the bot's identity and the channel's binding are known from now on.
    const warm = await say(h, { channel: W.general, text: `${botMention(h)} warm up` });
    await until(() => postsIn(h, W.general, warm.ts)[0], 'warm-up reply');
  });
  afterAll(async () => {
    proxy?.resume();
    await h?.close();
    await proxy?.close();
  });

  it('acks only after the message reached Redis', async () => {
    const text = `stored first (${mode})?`;
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} ${text}` });
    proxy.stall();
    let answered = false;
    const delivery = h.to.event(m.mention).finally(() => (answered = true));
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Acked before storing, the ack came back at once, while the push was still held.
    expect(answered).toBe(false);
    proxy.resume();
    expect(acked(await delivery)).toBe(true);
    await until(() => postsIn(h, W.general, m.ts)[0], 'the reply');
    expect(h.agent.chatCalls().filter((c) => c.message === text)).toHaveLength(1);
  });

  it("acks within Slack's 3 s when Redis stays stalled, and the message still gets one answer", async () => {
    const text = `slow redis (${mode})`;
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} ${text}` });
    proxy.stall();
    const first = await h.to.event(m.mention);
    proxy.resume();
    expect(acked(first)).toBe(true);
    expect(first.ms).toBeGreaterThanOrEqual(1_500);
    expect(first.ms).toBeLessThan(3_000);
    await until(() => postsIn(h, W.general, m.ts)[0], 'the reply');
    const barrier = await say(h, { channel: W.general, text: `${botMention(h)} barrier` });
    await until(() => postsIn(h, W.general, barrier.ts)[0], 'barrier reply');
    expect(h.agent.chatCalls().filter((c) => c.message === text)).toHaveLength(1);
    expect(postsIn(h, W.general, m.ts)).toHaveLength(1);
    expect(h.logs.text).toContain('was not stored within 2 s');
  });

  it('acks a slash command at once while Redis is stalled (only message events wait)', async () => {
    proxy.stall();
    try {
      const r = await h.to.command({ command: '/agent', text: 'help', user: W.user, channel: W.general });
      expect(acked(r)).toBe(true);
      expect(r.ms).toBeLessThan(1_000);
    } finally {
      proxy.resume();
    }
  });
});
