import { randomUUID } from 'node:crypto';
import { Queue, UnrecoverableError, Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBridge, type Bridge } from '../../src/app.js';
import type { Config } from '../../src/config/load.js';
import { startAgentEmulator, type AgentEmulator } from '../../src/demo/agent-emulator.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import { Metrics } from '../../src/metrics.js';
import { QUEUE_NAME } from '../../src/queue/types.js';
import { bullPrefix } from '../../src/redis.js';
import { webPlatform } from '../../adapters/web/index.js';
import { loadTestConfig } from '../support/config.js';
import { LogCapture } from '../support/pipeline.js';
import { deleteKeys } from '../support/redis-cleanup.js';

/**
 * The playground's queue figures against the Prometheus metrics of the same process, on the
 * real bridge (real Redis, the core worker, the agent emulator). The bridge runs twice on one
 * prefix, as after a restart: BullMQ keeps the first run's finished jobs and the failure log
 * keeps its entries, while the process's counters start again at zero.
 */
const prefix = `pgfigures-${randomUUID().slice(0, 8)}`;
let agent: AgentEmulator;
let config: Readonly<Config>;
let bridge: Bridge | undefined;

beforeAll(async () => {
  agent = await startAgentEmulator();
  config = loadTestConfig({
    AGENT_API_BASE_URL: agent.baseUrl,
    AGENT_API_KEY: agent.apiKey,
    QUEUE_PREFIX: prefix,
    HTTP_PORT: '0',
    PLAYGROUND: 'true',
    RETRY_BASE_DELAY_MS: '20',
    BINDINGS: 'web:general=demo-helper',
    LOG_LEVEL: 'info',
  });
});
afterAll(async () => {
  await bridge?.stop();
  await agent?.close();
  await deleteKeys(prefix);
});

async function start(): Promise<Bridge> {
  const secrets = new SecretRegistry();
  return startBridge({
    config,
    secrets,
    logger: createLogger({ level: config.logLevel, registry: secrets, destination: new LogCapture() }),
    metrics: new Metrics(),
    platforms: [webPlatform],
  });
}

const base = (b: Bridge) => `http://127.0.0.1:${b.httpPort}`;

async function say(b: Bridge, text: string): Promise<void> {
  const res = await fetch(`${base(b)}/playground/api/messages`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ channel: 'general', userName: 'Ann', messageId: randomUUID(), text }),
  });
  expect(res.status).toBe(200);
  expect(((await res.json()) as { result: { status: string } }).result.status).toBe('queued');
}

/** `name{labels} value` lines of /metrics, summed per (name, one label's value). */
async function scrape(b: Bridge): Promise<{ messages: Record<string, number>; jobs: Record<string, number> }> {
  const text = await (await fetch(`${base(b)}/metrics`)).text();
  const messages: Record<string, number> = {};
  const jobs: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^agent_bridge_messages_total\{.*outcome="([a-z_]+)".*\} (\d+)$/.exec(line);
    if (m) messages[m[1]!] = (messages[m[1]!] ?? 0) + Number(m[2]);
    const j = /^agent_bridge_queue_jobs\{state="([a-z]+)"\} (\d+)$/.exec(line);
    if (j) jobs[j[1]!] = Number(j[2]);
  }
  return { messages, jobs };
}

async function figures(b: Bridge): Promise<{ counts: Record<string, number | null>; failures: Array<{ ref: string; reason: string }> }> {
  return (await (await fetch(`${base(b)}/playground/api/queue`)).json()) as { counts: Record<string, number | null>; failures: Array<{ ref: string; reason: string }> };
}

/** Polls /metrics until the worker counted `replied` and `gave_up` and the queue is idle. */
async function settle(b: Bridge, replied: number, gaveUp: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { messages, jobs } = await scrape(b);
    if ((messages.replied ?? 0) === replied && (messages.gave_up ?? 0) === gaveUp && jobs.waiting === 0 && jobs.active === 0 && jobs.delayed === 0) return;
    if (Date.now() > deadline) throw new Error(`timed out: metrics ${JSON.stringify({ messages, jobs })}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A job that failed for good (what an unexpected error on every attempt leaves in BullMQ). */
async function failOneJob(): Promise<void> {
  const connection = { host: '127.0.0.1', port: 6379 };
  const queue = new Queue(QUEUE_NAME, { connection, prefix: bullPrefix(config) });
  const worker = new Worker(QUEUE_NAME, async () => {
    throw new UnrecoverableError('poisoned job');
  }, { connection, prefix: bullPrefix(config) });
  const failed = new Promise<void>((resolve) => worker.once('failed', () => resolve()));
  await queue.add('poison', { conversationId: 'web:local:nowhere' } as never, { jobId: `poison-${randomUUID()}`, attempts: 1 });
  await failed;
  await worker.close();
  await queue.close();
}

/** On a fresh start: `answered` is answered, then the agent refuses `refused` (400) and it is given up on. */
async function answerThenRefuse(b: Bridge, answered: string, refused: string): Promise<void> {
  await say(b, answered);
  await settle(b, 1, 0);
  agent.failNext(1, { status: 400, body: { error: 'bad request' } }, { endpoint: 'chat' });
  await say(b, refused);
  await settle(b, 1, 1);
}

describe('playground queue figures', () => {
  it('Completed, Gave up and Failed agree with /metrics and with Recent failures, after a restart too', async () => {
    // First run: one answered, one given up on.
    bridge = await start();
    await answerThenRefuse(bridge, '@agent first run, answered', '@agent first run, refused');
    await bridge.stop();
    bridge = undefined;

    await failOneJob();

    // Second run, same prefix: two answered, one given up on, one failed job from before.
    bridge = await start();
    await answerThenRefuse(bridge, '@agent second run, one', '@agent second run, refused');
    await say(bridge, '@agent second run, two');
    await settle(bridge, 2, 1);

    const { messages, jobs } = await scrape(bridge);
    const { counts, failures } = await figures(bridge);
    expect(messages).toEqual({ replied: 2, gave_up: 1 });
    expect(counts).toMatchObject({ completed: 2, gaveUp: 1, failed: 1, waiting: 0, active: 0 });
    // The same figures as /metrics, state by state.
    expect(counts.completed).toBe(messages.replied);
    expect(counts.gaveUp).toBe(messages.gave_up);
    for (const state of ['waiting', 'active', 'failed', 'delayed'] as const) expect(counts[state], state).toBe(jobs[state]);
    // BullMQ's completed jobs are another figure: both runs' jobs, the given-up ones included.
    expect(jobs.completed).toBe(5);
    // Recent failures lists the messages given up on (newest first), none of them under Completed.
    expect(failures).toHaveLength(2);
    expect(failures.every((f) => /bad request|bad_request|invalid/i.test(f.reason))).toBe(true);
  }, 120_000);
});
