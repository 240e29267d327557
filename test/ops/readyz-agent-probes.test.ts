import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentApi } from '../../src/agent-api/client.js';
import { agentReadiness } from '../../src/agent-api/reachability.js';
import { startAgentEmulator, type AgentEmulator } from '../../src/demo/agent-emulator.js';
import { createHttpServer, type HttpServer } from '../../src/http/server.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import { Metrics } from '../../src/metrics.js';

// /readyz needs no credentials; each probe of the agent service is a listing made with the
// operator's key. Anyone who can reach /readyz must not be able to turn requests into listings.
describe('/readyz while the agent service does not answer', () => {
  let redis: Redis;
  let emulator: AgentEmulator;
  let http: HttpServer;
  let base: string;
  let now = Date.now();

  beforeAll(async () => {
    redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 3, connectionName: 'ops-readyz-probes-test' });
    emulator = await startAgentEmulator();
    const agentApi = createAgentApi(emulator.agentConfig());
    const logger = createLogger({ level: 'fatal', registry: new SecretRegistry() });
    http = createHttpServer({
      host: '127.0.0.1',
      port: 0,
      metrics: new Metrics(),
      logger,
      redis,
      agentReady: agentReadiness(agentApi, 60_000, { now: () => now }),
    });
    base = `http://127.0.0.1:${await http.listen()}`;
  });

  afterAll(async () => {
    await http.close();
    await emulator.close();
    await redis.quit();
  });

  const listings = () => emulator.calls.filter((c) => c.endpoint === 'instances').length;

  it('makes one listing for a burst of probes, and none for probes soon after, not one per request', async () => {
    emulator.hangNext(1_000, { endpoint: 'instances' });
    const answers = await Promise.all(Array.from({ length: 100 }, () => fetch(`${base}/readyz`).then(async (r) => ({ status: r.status, body: await r.json() }))));
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([503]));
    expect(answers[0]!.body).toMatchObject({ redis: 'ok', agent: 'down' });
    expect(listings()).toBe(1);

    // Probes right after still say down, from the last listing.
    for (let i = 0; i < 20; i++) expect((await fetch(`${base}/readyz`)).status).toBe(503);
    expect(listings()).toBe(1);

    // Some seconds later the service is asked again (and, answering now, the bridge is ready).
    emulator.reset();
    now += 5_000;
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect(listings()).toBe(1);
  });
});
