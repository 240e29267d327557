import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisStallProxy, type RedisStallProxy } from '../support/redis-stall-proxy.js';
import { W, botMention, postsIn, say, startSlackBridge, until, type SlackHarness } from './harness.js';

/**
 * Slack's 200 for an event is its promise not to send it again: over HTTP the bridge gives it
 * only once the message is stored, so a bridge killed right after the 200 loses nothing. Redis
 * is stalled for this bridge alone (a proxy), which widens the moment between the two.
 */
describe('Slack over HTTP: a message is acknowledged once it is stored', () => {
  let h: SlackHarness;
  let proxy: RedisStallProxy;

  beforeAll(async () => {
    proxy = await startRedisStallProxy();
    h = await startSlackBridge({ mode: 'http', env: { REDIS_URL: proxy.url } });
    // Warm up: the bot's identity and the channel's binding are known from now on.
    const warm = await say(h, { channel: W.general, text: `${botMention(h)} warm up` });
    await until(() => postsIn(h, W.general, warm.ts)[0], 'warm-up reply');
  });
  afterAll(async () => {
    proxy?.resume();
    await h?.close();
    await proxy?.close();
  });

  it('answers 200 only after the message reached Redis', async () => {
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} stored first?` });
    proxy.stall();
    let answered = false;
    const delivery = h.to.event(m.mention).finally(() => (answered = true));
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Acked before storing, the 200 came back at once, while the push was still held.
    expect(answered).toBe(false);
    proxy.resume();
    expect((await delivery).status).toBe(200);
    await until(() => postsIn(h, W.general, m.ts)[0], 'the reply');
    expect(h.agent.chatCalls().filter((c) => c.message === 'stored first?')).toHaveLength(1);
  });

  it("answers 200 within Slack's 3 s when Redis stays stalled, and the message still gets one answer", async () => {
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} slow redis` });
    proxy.stall();
    const first = await h.to.event(m.mention);
    proxy.resume();
    expect(first.status).toBe(200);
    expect(first.ms).toBeGreaterThanOrEqual(1_500);
    expect(first.ms).toBeLessThan(3_000);
    await until(() => postsIn(h, W.general, m.ts)[0], 'the reply');
    const barrier = await say(h, { channel: W.general, text: `${botMention(h)} barrier` });
    await until(() => postsIn(h, W.general, barrier.ts)[0], 'barrier reply');
    expect(h.agent.chatCalls().filter((c) => c.message === 'slow redis')).toHaveLength(1);
    expect(postsIn(h, W.general, m.ts)).toHaveLength(1);
    expect(h.logs.text).toContain('was not stored within 2 s');
  });
});

/** The same promise over Socket Mode: Slack redelivers an envelope that is not acked. */
describe('Slack over Socket Mode: a message envelope is acknowledged once it is stored', () => {
  let h: SlackHarness;
  let proxy: RedisStallProxy;

  beforeAll(async () => {
    proxy = await startRedisStallProxy();
    h = await startSlackBridge({ mode: 'socket', env: { REDIS_URL: proxy.url } });
    const warm = await say(h, { channel: W.general, text: `${botMention(h)} warm up` });
    await until(() => postsIn(h, W.general, warm.ts)[0], 'warm-up reply');
  });
  afterAll(async () => {
    proxy?.resume();
    await h?.close();
    await proxy?.close();
  });

  it('acks only after the message reached Redis', async () => {
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} stored first over a socket?` });
    proxy.stall();
    let answered = false;
    const delivery = h.to.event(m.mention).finally(() => (answered = true));
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Acked by Bolt before storing, the envelope's ack came back at once.
    expect(answered).toBe(false);
    proxy.resume();
    expect((await delivery).acked).toBe(true);
    await until(() => postsIn(h, W.general, m.ts)[0], 'the reply');
    expect(h.agent.chatCalls().filter((c) => c.message === 'stored first over a socket?')).toHaveLength(1);
  });

  it("acks within Slack's 3 s when Redis stays stalled, and the message still gets one answer", async () => {
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} slow redis over a socket` });
    proxy.stall();
    const first = await h.to.event(m.mention);
    proxy.resume();
    expect(first.acked).toBe(true);
    expect(first.ms).toBeGreaterThanOrEqual(1_500);
    expect(first.ms).toBeLessThan(3_000);
    await until(() => postsIn(h, W.general, m.ts)[0], 'the reply');
    expect(h.agent.chatCalls().filter((c) => c.message === 'slow redis over a socket')).toHaveLength(1);
    expect(h.logs.text).toContain('was not stored within 2 s');
  });

  it('acks a slash command at once while Redis is stalled (only message events wait)', async () => {
    proxy.stall();
    try {
      const r = await h.to.command({ command: '/agent', text: 'help', user: W.user, channel: W.general });
      expect(r.acked).toBe(true);
      expect(r.ms).toBeLessThan(1_000);
    } finally {
      proxy.resume();
    }
  });
});
