import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisStallProxy, type RedisStallProxy } from '../support/redis-stall-proxy.js';
import { installWorkspace, startAddToSlackBridge, type SlackHarness } from './harness.js';

/**
 * "Add to Slack": every request is authorized from its installation in Redis, and its place
 * recorded there, before `/agent`'s listener can ack. A Redis that stalls must not make Slack's
 * 3 s run out (the admin would read "/agent failed with the error operation_timeout").
 */
describe('/agent while Redis stalls, with "Add to Slack"', () => {
  let h: SlackHarness;
  let proxy: RedisStallProxy;
  beforeAll(async () => {
    proxy = await startRedisStallProxy();
    h = await startAddToSlackBridge({ env: { REDIS_URL: proxy.url } });
    expect((await installWorkspace(h, 'TALPHA001')).done.status).toBe(200);
  });
  afterAll(async () => {
    proxy?.resume();
    await h?.close();
    await proxy?.close();
  });

  it('is acked within 3 s, and answered through response_url', async () => {
    proxy.stall();
    try {
      const ack = await h.to.command({ text: 'instances', user: 'UADMIN001', channel: 'CALPHA001', team: 'TALPHA001' });
      expect(ack.status).toBe(200);
      expect(ack.ms).toBeLessThan(2_500);
      const answer = await h.slack.waitForCall('response_url', (c) => c.response.id === ack.responseUrlId, 15_000);
      expect(answer.params.blocks).toContain('demo-helper');
      expect(h.logs.text).toContain('using the copy read before');
    } finally {
      proxy.resume();
    }
  });
});
