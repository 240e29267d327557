import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer, type HttpServer } from '../../src/http/server.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import { Metrics } from '../../src/metrics.js';

// /metrics refreshes the queue gauges from Redis first. While Redis is away that refresh waits out
// the client's retries; the scrape must still be answered, and scrapes must not pile up refreshes.
describe('/metrics while its refresh does not finish (Redis away)', () => {
  let redis: Redis;
  let http: HttpServer;
  let base: string;
  let refreshes = 0;
  const metrics = new Metrics();

  beforeAll(async () => {
    redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 3, connectionName: 'ops-metrics-refresh-test' });
    metrics.queueDepth.set({ state: 'waiting' }, 7);
    http = createHttpServer({
      host: '127.0.0.1',
      port: 0,
      metrics,
      logger: createLogger({ level: 'fatal', registry: new SecretRegistry() }),
      redis,
      agentReady: async () => true,
      beforeMetrics: () => {
        refreshes++;
        return new Promise<void>(() => {});
      },
    });
    base = `http://127.0.0.1:${await http.listen()}`;
  });

  afterAll(async () => {
    await http.close();
    await redis.quit();
  });

  it('answers every scrape within seconds with the last figures, from one refresh for a burst of scrapes', async () => {
    const scrapes = await Promise.all(
      Array.from({ length: 30 }, () => fetch(`${base}/metrics`, { signal: AbortSignal.timeout(4_000) }).then(async (r) => ({ status: r.status, text: await r.text() }))),
    );
    for (const s of scrapes) {
      expect(s.status).toBe(200);
      expect(s.text).toContain('agent_bridge_queue_jobs{state="waiting"} 7');
    }
    expect(refreshes).toBe(1);
  });
});
