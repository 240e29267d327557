import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { explainFailure } from '../../src/agent-api/problem-words.js';
import { createAgentApi } from '../../src/agent-api/client.js';
import { AgentPool } from '../../src/agent-api/agent-pool.js';
import { ANSWER_UNREADABLE } from '../../src/agent-api/http.js';
import { CALL_MAY_HAVE_RUN } from '../../src/core/errors.js';
import { decide } from '../../src/worker/error-policy.js';
import { agentFailure } from '../support/expect-error.js';

/**
 * A 2xx answer whose body cannot be read (the connection cut mid-body, a body that does not
 * decode): the service ran the call, so it is not asked again (an invalid answer, given up),
 * whatever the call guarantee. A cut before the head stays a retryable network error.
 */
type Behaviour = (req: IncomingMessage, res: ServerResponse) => void;
let server: Server | undefined;
const pools: AgentPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  server = undefined;
});

async function agentThat(behaviour: Behaviour) {
  server = createServer((req, res) => req.resume().on('end', () => behaviour(req, res)));
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const pool = new AgentPool({ connections: 2 });
  pools.push(pool);
  return createAgentApi({ baseUrl: `http://127.0.0.1:${port}/api/v1`, apiKey: 'k', timeoutMs: 5_000, otherTimeoutMs: 5_000 }, { pool });
}

const policy = { attempts: 5, baseDelayMs: 10 };

describe('a 2xx answer that cannot be read', () => {
  it.each<[string, Behaviour]>([
    [
      'cut off mid-body',
      (_q, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '200' });
        res.write('{"response": "par');
        setTimeout(() => res.socket?.destroy(), 50);
      },
    ],
    [
      'gzip that does not decode',
      (_q, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end('not gzip');
      },
    ],
  ])('%s: an invalid answer, given up at once, in plain words', async (_, behaviour) => {
    const api = await agentThat(behaviour);
    const err = await agentFailure(api.chat('i1', 'hi'));
    expect(err).toMatchObject({ kind: 'invalid_response', status: 200, code: ANSWER_UNREADABLE, retryable: false });
    expect(decide(err, 0, policy)).toEqual({ action: 'give-up' });
    expect(explainFailure(err)).toBe("The agent answered, but its answer didn't arrive whole and couldn't be read. Please ask again.");
  });

  it('a connection cut before the head is still a network error (retryable; it may have run)', async () => {
    const api = await agentThat((_q, res) => res.socket?.destroy());
    const err = await agentFailure(api.chat('i1', 'hi'));
    expect(err).toMatchObject({ kind: 'network', code: CALL_MAY_HAVE_RUN, retryable: true });
  });
});
