import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisStallProxy, type RedisStallProxy } from '../support/redis-stall-proxy.js';
import { chatCalls, installWorkspace, logLines, startAddToSlackBridge, until, type SlackHarness } from './harness.js';

const TEAM = 'T0ONE0001';

/**
 * "Add to Slack": Bolt reads each event's installation before any listener, and acked with a 200
 * whatever failed there. A Redis blip at that moment lost the message for good; a workspace
 * with no installation gave two log lines per event, the error one saying only "listener failed".
 */
describe('Slack: events whose installation cannot be read', () => {
  let h: SlackHarness;
  let proxy: RedisStallProxy;
  beforeAll(async () => {
    proxy = await startRedisStallProxy();
    h = await startAddToSlackBridge({ env: { BINDINGS: 'slack:C0GENERAL=demo-helper', REDIS_URL: proxy.url }, agent: { reply: (_id, message) => `echo: ${message}` } });
    await installWorkspace(h, TEAM);
  });
  afterAll(async () => {
    proxy?.resume();
    await h?.close();
    await proxy?.close();
  });

  const mention = (text: string, team = TEAM) => h.slack.userMessage({ channel: 'C0GENERAL', user: 'UUSER0001', text: `<@${h.slack.identity.botUserId}> ${text}`, team }).mention;

  it('Redis lost at that moment: not acked (503), so Slack sends it again, and the redelivery is answered once', async () => {
    const event = mention('asked while Redis blinked');
    proxy.cut();
    const first = await h.to.event(event, { eventId: 'EvBLINK1', team: { teamId: TEAM } });
    await proxy.restore();
    expect(first.status).toBe(503);
    expect(chatCalls(h)).toEqual([]);
    // Slack's retry of the same event (X-Slack-Retry-Num), once Redis is back.
    await until(async () => (await h.to.event(event, { eventId: 'EvBLINK1', team: { teamId: TEAM }, retryNum: 1, retryReason: 'http_error' })).status === 200, 'redelivery acked', 20_000);
    await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.text === 'echo: asked while Redis blinked', 20_000);
    expect(chatCalls(h).filter((c) => (c.json as { message?: string }).message === 'asked while Redis blinked')).toHaveLength(1);
    expect(logLines(h, /could not read the Slack installation of an event \(Redis unavailable\): answered 503/)).toHaveLength(1);
  }, 60_000);

  it('a workspace with no installation: acked, and named once with the fix, not an error per event', async () => {
    for (let i = 0; i < 3; i++) expect((await h.to.event(mention(`hello ${i}`, 'T0NOTINST'), { team: { teamId: 'T0NOTINST' } })).status).toBe(200);
    const lines = logLines(h, /has no installation here/);
    expect(lines).toHaveLength(1);
    expect(String(lines[0]!.msg)).toMatch(/team:T0NOTINST.*reinstall the app in that workspace \(\/slack\/install\)/);
    expect(logLines(h, /Slack listener failed|Authorization of incoming event/).filter((l) => (l.level as number) >= 40)).toEqual([]);
  });
});
