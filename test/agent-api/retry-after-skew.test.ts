import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentApi } from '../../src/agent-api/client.js';
import { AgentPool } from '../../src/agent-api/agent-pool.js';
import { agentFailure } from '../support/expect-error.js';

/**
 * A Retry-After given as an HTTP-date, by an agent service whose clock is 10 minutes ahead of the
 * worker's (or the worker's behind): read against the service's own Date header, a 30 s wait is
 * 30 s, not a 10.5 minute one that gives the message up as a quota used up.
 */
let server: Server | undefined;
const pools: AgentPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  server = undefined;
});

describe('an HTTP-date Retry-After from a service whose clock is 10 min off the worker', () => {
  it('is read against the Date the service sent', async () => {
    const serviceNow = Math.floor(Date.now() / 1000) * 1000 + 10 * 60_000;
    server = createServer((req, res) =>
      req.resume().on('end', () => {
        res.writeHead(429, {
          'content-type': 'application/json',
          date: new Date(serviceNow).toUTCString(),
          'retry-after': new Date(serviceNow + 30_000).toUTCString(),
        });
        res.end('{"error":"slow down"}');
      }),
    );
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const pool = new AgentPool({ connections: 1 });
    pools.push(pool);
    const api = createAgentApi({ baseUrl: `http://127.0.0.1:${port}/api/v1`, apiKey: 'k', timeoutMs: 5_000, otherTimeoutMs: 5_000 }, { pool });
    const err = await agentFailure(api.chat('inst-1', 'hi'));
    expect(err.retryAfterMs).toBe(30_000);
  });
});
