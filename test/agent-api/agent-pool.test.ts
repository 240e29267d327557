import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { agentFailure } from '../support/expect-error.js';
import { explainFailure } from '../../src/agent-api/problem-words.js';
import { AgentPool } from '../../src/agent-api/agent-pool.js';
import { createAgentApi } from '../../src/agent-api/client.js';
import { RESPONSE_TOO_LARGE } from '../../src/agent-api/http.js';
import { startAgentEmulator, type AgentEmulator } from '../../src/demo/agent-emulator.js';
import { Metrics } from '../../src/metrics.js';


let emu: AgentEmulator;
const pools: AgentPool[] = [];
beforeEach(async () => {
  emu = await startAgentEmulator();
});
afterEach(async () => {
  emu.releaseHanging();
  await Promise.all(pools.splice(0).map((p) => p.close()));
  await emu.close();
});

function smallPool(connections: number): AgentPool {
  const pool = new AgentPool({ connections });
  pools.push(pool);
  return pool;
}

async function gauges(metrics: Metrics): Promise<{ inFlight: number; waiting: number }> {
  const text = await metrics.registry.metrics();
  const read = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
  return { inFlight: read('agent_bridge_agent_calls_in_flight'), waiting: read('agent_bridge_agent_calls_waiting') };
}

const failure = agentFailure;

describe('agent connection pool', () => {
  it('a call waiting for a connection is not timed out by the wait: the limit runs from dispatch', async () => {
    // Five 300 ms calls through one connection: the last one ends ≥ 1.5 s after it was made,
    // past its 1 s limit, yet each call's own exchange takes 300 ms.
    const api = createAgentApi(emu.agentConfig({ timeoutMs: 1_000 }), { pool: smallPool(1), connectionWaitMs: 60_000 });
    const metrics = new Metrics();
    metrics.watchAgentCalls(api.calls!);
    emu.setDelay(300, { endpoint: 'chat' });

    const calls = Array.from({ length: 5 }, (_, i) => api.chat('demo-helper', `q${i}`));
    await emu.waitForCalls(1);
    expect(await gauges(metrics)).toEqual({ inFlight: 1, waiting: 4 });
    expect(emu.openRequests()).toBe(1);

    const replies = await Promise.all(calls);
    expect(replies).toHaveLength(5);
    expect(emu.peakOpenRequests()).toBe(1);
    expect(await gauges(metrics)).toEqual({ inFlight: 0, waiting: 0 });
  });

  it('the wait for a connection is bounded on its own, and says so', async () => {
    const api = createAgentApi(emu.agentConfig({ timeoutMs: 60_000 }), { pool: smallPool(1), connectionWaitMs: 200 });
    emu.hangNext(1, { endpoint: 'chat' });
    const first = api.chat('demo-helper', 'holds the only connection');
    await emu.waitForCalls(1);

    const err = await failure(api.chat('demo-helper', 'waits'));
    expect(err).toMatchObject({ kind: 'timeout', retryable: true });
    expect(err.message).toBe('no connection to the agent service came free within 200 ms');
    expect(api.calls!()).toEqual({ inFlight: 1, waiting: 0 });

    emu.releaseHanging();
    await expect(first).resolves.toMatchObject({ response: expect.any(String) });
    // The call that gave up waiting never reached the service.
    expect(emu.chatCalls().map((c) => c.message)).toEqual(['holds the only connection']);
  });

  it('with the default pool, 650 concurrent slow calls are all open at the service at once', async () => {
    const api = createAgentApi(emu.agentConfig());
    const n = 650;
    emu.hangNext(n, { endpoint: 'chat' });
    const calls = Array.from({ length: n }, (_, i) => api.chat('demo-helper', `q${i}`));
    await emu.waitForCalls(n, (c) => c.endpoint === 'chat', 60_000);
    expect(emu.hangingCount()).toBe(n);
    expect(emu.openRequests()).toBe(n);
    expect(api.calls!()).toEqual({ inFlight: n, waiting: 0 });
    emu.releaseHanging();
    expect(await Promise.all(calls)).toHaveLength(n);
  }, 120_000);
});

describe('AGENT_MAX_RESPONSE_BYTES', () => {
  it('a streamed 50 MB answer is cut at the limit: non-retryable, plain words for the user, connection dropped', async () => {
    const api = createAgentApi(emu.agentConfig({ maxResponseBytes: 1_000_000 }));
    emu.hugeNext(1, 50_000_000, { endpoint: 'chat' });
    const err = await failure(api.chat('demo-helper', 'tell me everything'));
    expect(err).toMatchObject({ kind: 'invalid_response', code: RESPONSE_TOO_LARGE, status: 200, retryable: false });
    expect(err.message).toBe(
      'agent service answered 200 with a body larger than AGENT_MAX_RESPONSE_BYTES (1000000 bytes); it was not read',
    );
    expect(explainFailure(err)).toBe("The agent's answer was too long to post here. Please ask for a shorter answer.");
    // The client hung up instead of reading 50 MB.
    await vi.waitFor(() => expect(emu.openRequests()).toBe(0), { timeout: 10_000 });
  });

  it('a declared Content-Length over the limit is refused before reading', async () => {
    const api = createAgentApi(emu.agentConfig({ maxResponseBytes: 1_000 }));
    emu.malformedNext(1, JSON.stringify({ messageId: 'm1', response: 'x'.repeat(2_000) }), { endpoint: 'chat' });
    const err = await failure(api.chat('demo-helper', 'hi'));
    expect(err).toMatchObject({ kind: 'invalid_response', code: RESPONSE_TOO_LARGE });
  });

  it('an answer just under the limit is read whole', async () => {
    const text = 'é'.repeat(400_000); // 800 000 bytes of UTF-8
    await emu.close();
    emu = await startAgentEmulator({ reply: () => text });
    const api = createAgentApi(emu.agentConfig({ maxResponseBytes: 1_000_000 }));
    expect((await api.chat('demo-helper', 'hi')).response).toBe(text);
  });

  it('a passed-in fetch is held to the limit too', async () => {
    const api = createAgentApi(emu.agentConfig({ maxResponseBytes: 1_000 }), { fetch });
    emu.hugeNext(1, 5_000, { endpoint: 'chat' });
    const err = await failure(api.chat('demo-helper', 'hi'));
    expect(err).toMatchObject({ kind: 'invalid_response', code: RESPONSE_TOO_LARGE });
  });
});
