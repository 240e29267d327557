import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { MAX_CONNECTIONS } from '../emulators/slack/socket-mode.js';
import { startRedisStallProxy, type RedisStallProxy } from '../support/redis-stall-proxy.js';
import { W, botMention, postsIn, say, startSlackBridge, until, type SlackHarness } from './harness.js';

/** Resolves once the emulator has had more than `n` Socket Mode connections. */
function connectionAfter(h: SlackHarness, n: number): Promise<void> {
  return until(() => h.slack.socket.connections > n && h.slack.socket.connected, 'a new Socket Mode connection').then(() => undefined);
}

/**
 * Socket Mode as Slack runs it: connections are recycled (`disconnect` with `warning`, then
 * `refresh_requested`), an envelope not acked in time comes again with `retry_attempt` (maybe on
 * another connection), and Socket Mode can be turned off or the app token revoked mid-run.
 */
describe('Slack Socket Mode, as strict as Slack', () => {
  let h: SlackHarness;
  let proxy: RedisStallProxy;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    proxy = await startRedisStallProxy();
    h = await startSlackBridge({ mode: 'socket', env: { REDIS_URL: proxy.url } });
    const warm = await say(h, { channel: W.general, text: `${botMention(h)} warm up` });
    await until(() => postsIn(h, W.general, warm.ts)[0], 'warm-up reply');
  });
  afterEach(() => proxy.resume());
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    proxy?.resume();
    await h?.close();
    await proxy?.close();
  });

  it('answers once a message whose ack was lost in a refresh and that came again on the new connection', async () => {
    const text = 'ack lost in the switch';
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} ${text}` });
    const before = h.slack.socket.connections;
    proxy.stall();
    // The first delivery's ack is held (Redis slow) while Slack recycles the connection.
    const first = h.to.event(m.mention, { eventId: 'EvSTRICTSWITCH' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    h.slack.socket.disconnect('warning');
    h.slack.socket.disconnect('refresh_requested');
    await connectionAfter(h, before);
    proxy.resume();
    await first;
    // Slack sends the envelope again (same event_id) on the connection it has now.
    const again = await h.to.event(m.mention, { eventId: 'EvSTRICTSWITCH', retryNum: 1, retryReason: 'timeout' });
    expect(again.acked).toBe(true);
    await until(() => postsIn(h, W.general, m.ts)[0], 'the reply');
    const barrier = await say(h, { channel: W.general, text: `${botMention(h)} barrier one` });
    await until(() => postsIn(h, W.general, barrier.ts)[0], 'barrier reply');
    expect(h.agent.chatCalls().filter((c) => c.message === text)).toHaveLength(1);
    expect(postsIn(h, W.general, m.ts)).toHaveLength(1);
  });

  it('answers once a message Slack sent again while the first delivery was still held (Redis stalled past 3 s)', async () => {
    const text = 'sent twice while redis stalls';
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} ${text}` });
    proxy.stall();
    const first = h.to.event(m.mention, { eventId: 'EvSTRICTTWICE' });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // Slack's patience is not the bridge's business: a second delivery may come before the first ack.
    const second = h.to.event(m.mention, { eventId: 'EvSTRICTTWICE', retryNum: 1, retryReason: 'timeout' });
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    proxy.resume();
    const [a, b] = await Promise.all([first, second]);
    expect(a.ms).toBeLessThan(3_000);
    if (b.acked) expect(b.ms).toBeLessThan(3_000);
    await until(() => postsIn(h, W.general, m.ts)[0], 'the reply');
    const barrier = await say(h, { channel: W.general, text: `${botMention(h)} barrier two` });
    await until(() => postsIn(h, W.general, barrier.ts)[0], 'barrier reply');
    expect(h.agent.chatCalls().filter((c) => c.message === text)).toHaveLength(1);
    expect(postsIn(h, W.general, m.ts)).toHaveLength(1);
  });

  it('notices a connection that went dead without a close (no pong) and reconnects', async () => {
    const before = h.slack.socket.connections;
    h.slack.socket.freeze();
    await connectionAfter(h, before);
    const m = await say(h, { channel: W.general, text: `${botMention(h)} after the dead link` });
    await until(() => postsIn(h, W.general, m.ts)[0], 'the reply');
  });

  it('loses no message sent on the old connection between `warning` and its close', async () => {
    const before = h.slack.socket.connections;
    h.slack.socket.disconnect('warning');
    // Slack may still use the warned connection until it closes it.
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} during the switch` });
    const delivery = await h.to.event(m.mention, { eventId: 'EvSTRICTWARN', connection: 0 }).catch(() => undefined);
    await connectionAfter(h, before);
    if (!delivery?.acked) await h.to.event(m.mention, { eventId: 'EvSTRICTWARN', retryNum: 1, retryReason: 'timeout' });
    await until(() => postsIn(h, W.general, m.ts)[0], 'the reply');
    expect(h.agent.chatCalls().filter((c) => c.message === 'during the switch')).toHaveLength(1);
  });

  it('reconnects when apps.connections.open is rate limited or Slack has a passing fault, without calling the token refused', async () => {
    const before = h.slack.socket.connections;
    const opens = h.slack.callsOf('apps.connections.open').length;
    h.slack.fail('apps.connections.open', { error: 'ratelimited', retryAfterSeconds: 1 });
    h.slack.fail('apps.connections.open', { error: 'internal_error' });
    h.slack.socket.disconnect('refresh_requested');
    await until(() => h.slack.socket.connections > before && h.slack.socket.connected, 'reconnected', 20_000);
    expect(h.slack.callsOf('apps.connections.open').length).toBeGreaterThanOrEqual(opens + 3);
    expect(h.logs.matching(/refused SLACK_APP_TOKEN/)).toEqual([]);
    const m = await say(h, { channel: W.general, text: `${botMention(h)} after the rate limit` });
    await until(() => postsIn(h, W.general, m.ts)[0], 'the reply');
  }, 30_000);

  it('tells the operator, at error level, that Socket Mode was turned off (link_disabled)', async () => {
    h.slack.socket.disableLink();
    const line = await until(() => h.logs.matching(/Socket Mode/).find((l) => l.level === 50 && /link_disabled/.test(String(l.msg))), 'an error naming link_disabled');
    expect(String(line.msg)).toMatch(/turn(ed)? (it )?on|Socket Mode.*settings|HTTP/i);
    h.slack.socket.enableLink();
    await until(() => h.slack.socket.connected, 'reconnected once Socket Mode is back on', 30_000);
    const m = await say(h, { channel: W.general, text: `${botMention(h)} back on` });
    await until(() => postsIn(h, W.general, m.ts)[0], 'the reply');
  }, 45_000);

  it('tells the operator when Slack refuses a connection as one too many (another process on the same app token)', async () => {
    // Another process takes all of the app's connections while the bridge reconnects.
    h.slack.socket.disconnect('refresh_requested');
    await until(() => h.slack.socket.openConnections === 0, 'the bridge closed its connection');
    const others = await Promise.all(
      Array.from({ length: MAX_CONNECTIONS }, async () => {
        const ws = new WebSocket(String(h.slack.socket.open().url));
        await new Promise((resolve, reject) => ws.once('message', resolve).once('error', reject));
        return ws;
      }),
    );
    try {
      const line = await until(() => h.logs.matching(/too_many_websockets/).find((l) => l.level === 50), 'an error naming too_many_websockets');
      expect(String(line.msg)).toContain('SLACK_APP_TOKEN');
    } finally {
      for (const ws of others) ws.close();
    }
    await until(() => h.slack.socket.openConnections === 1, 'the bridge connected again', 20_000);
  }, 30_000);

  it('tells the operator that Slack refused SLACK_APP_TOKEN when it is revoked mid-run', async () => {
    const token = h.slack.identity.appToken;
    h.slack.state.identity.appToken = 'xapp-1-another-token';
    try {
      h.slack.socket.disconnect('refresh_requested');
      const line = await until(() => h.logs.matching(/refused SLACK_APP_TOKEN/).find((l) => l.level === 50), 'an error naming SLACK_APP_TOKEN', 20_000);
      expect(String(line.msg)).toContain('invalid_auth');
      expect(h.logs.text).not.toContain(token);
      expect(unhandled).toEqual([]);
    } finally {
      h.slack.state.identity.appToken = token;
    }
  }, 30_000);
});
