import { Queue } from 'bullmq';
import { loadTestConfig } from '../../test/support/config.js';
import { Redis } from 'ioredis';
import { startBridge, type Bridge } from '../../src/app.js';

import { createLogger } from '../../src/logger.js';
import { Metrics } from '../../src/metrics.js';
import { sinkPlatform } from '../../test/support/sink.js';
import { webMessage } from '../../test/support/pipeline.js';
import { Child } from '../lib/children.js';
import { deleteKeys } from '../lib/redis-admin.js';
import { BENCH_QUEUE, type FloorJob } from '../procs/floor-job.js';
import type { BenchContext } from './context.js';

export type PathKind = 'bridge' | 'floor';

/**
 * One side of a comparison: how a message gets in (bridge: the ingress of a `ROLE=ingress`
 * bridge in the driver, with a web `IncomingMessage`; floor: bare `Queue.add`) and the worker
 * processes that answer it.
 */
export interface GenericPath {
  readonly kind: PathKind;
  readonly prefix: string;
  /** Hands one message in; resolves once it is queued. `conversation` makes it a thread of its own. */
  send(messageId: string, conversation: string, text: string): Promise<void>;
  pause(): Promise<void>;
  resume(): Promise<void>;
  counts(): Promise<{ active: number; waiting: number }>;
  /** Starts more worker processes (in parallel) with this concurrency each; returns all running ones. */
  startWorkers(count: number, concurrency: number, label: string): Promise<Child[]>;
  stopWorkers(): Promise<void>;
  /** Stops workers and ingress and deletes the path's Redis keys. */
  close(): Promise<void>;
}

const bridgeWorkerEntry = new URL('../procs/bridge-worker.ts', import.meta.url);
const floorWorkerEntry = new URL('../procs/floor-worker.ts', import.meta.url);

/** Settings shared by the driver's ingress and the bridge worker processes. */
export function bridgeEnv(ctx: BenchContext, prefix: string): Record<string, string> {
  const s = ctx.services.readyValue;
  return {
    REDIS_URL: ctx.settings.redisUrl,
    AGENT_API_BASE_URL: s.agentBaseUrl,
    AGENT_API_KEY: s.agentApiKey,
    QUEUE_PREFIX: prefix,
    HTTP_PORT: '0',
    PLAYGROUND: 'false',
    LOG_LEVEL: 'warn',
    SHUTDOWN_TIMEOUT_MS: '5000',
    BINDINGS: 'web:c1=demo-helper',
    // Every scenario floods the one channel c1, as the floor does: no per-channel cap.
    MAX_PENDING_PER_CHANNEL: '0',
    BENCH_SINK_URL: s.sinkUrl,
  };
}

async function queueCounts(queue: Queue): Promise<{ active: number; waiting: number }> {
  const c = await queue.getJobCounts('active', 'waiting', 'prioritized');
  return { active: c.active ?? 0, waiting: (c.waiting ?? 0) + (c.prioritized ?? 0) };
}

/**
 * A path's queue controls and worker processes, the same for both kinds: `spawnOne` starts one
 * worker process with the concurrency `startWorkers` was given.
 */
function workerPool(
  queue: Queue,
  spawnOne: (label: string, concurrency: number) => Promise<Child>,
): Pick<GenericPath, 'pause' | 'resume' | 'counts' | 'startWorkers' | 'stopWorkers'> {
  let workers: Child[] = [];
  return {
    pause: () => queue.pause(),
    resume: () => queue.resume(),
    counts: () => queueCounts(queue),
    async startWorkers(count, concurrency, label) {
      const first = workers.length;
      const name = (i: number) => (count === 1 && first === 0 ? label : `${label}-${first + i + 1}`);
      const started = await Promise.allSettled(Array.from({ length: count }, (_, i) => spawnOne(name(i), concurrency)));
      workers.push(...started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])));
      const failed = started.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
      return workers;
    },
    async stopWorkers() {
      const current = workers;
      workers = [];
      await Promise.all(current.map((w) => w.stop()));
    },
  };
}

export async function bridgePath(ctx: BenchContext, tag: string): Promise<GenericPath> {
  const prefix = `${ctx.runId}-${tag}-bridge`;
  const env = bridgeEnv(ctx, prefix);
  const config = loadTestConfig({ ...env, ROLE: 'ingress' });
  let bridge: Bridge;
  try {
    bridge = await startBridge({
      config,
      logger: createLogger({ level: 'warn', pretty: false }),
      metrics: new Metrics(),
      platforms: [sinkPlatform(ctx.services.readyValue.sinkUrl)],
    });
  } catch (err) {
    await deleteKeys(ctx.redis, prefix);
    throw err;
  }
  const queue = bridge.queue.queue;
  const pool = workerPool(queue, (label, concurrency) =>
    Child.spawn(bridgeWorkerEntry, {
      label,
      profile: ctx.settings.profile,
      env: { ...env, ROLE: 'worker', WORKER_CONCURRENCY: String(concurrency), ...(ctx.settings.workerNodeOptions ? { NODE_OPTIONS: ctx.settings.workerNodeOptions } : {}) },
    }),
  );
  return {
    kind: 'bridge',
    prefix,
    async send(messageId, conversation, text) {
      const result = await bridge.ingress.handle(webMessage(text, { channelId: 'c1', threadId: conversation, messageId }));
      if (result.status !== 'queued') throw new Error(`ingress did not queue ${messageId}: ${JSON.stringify(result)}`);
    },
    ...pool,
    async close() {
      await pool.stopWorkers();
      await bridge.stop();
      await deleteKeys(ctx.redis, prefix);
    },
  };
}

/**
 * `record`: the floor also records each answer in one fenced script before posting it (as the
 * bridge's exactly-once step does), to show what that step alone costs (scenario 1).
 */
export async function floorPath(ctx: BenchContext, tag: string, { record = false } = {}): Promise<GenericPath> {
  const prefix = `${ctx.runId}-${tag}-floor${record ? '-record' : ''}`;
  const s = ctx.services.readyValue;
  const connection = new Redis(ctx.settings.redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue<FloorJob>(BENCH_QUEUE, {
    connection,
    prefix,
    // The same retention as the bridge's defaults (KEEP_COMPLETED_*), so Redis does the same work.
    defaultJobOptions: { removeOnComplete: { age: 86_400, count: 100_000 }, removeOnFail: { age: 7 * 86_400, count: 10_000 } },
  });
  const pool = workerPool(queue, (label, concurrency) =>
    Child.spawn(floorWorkerEntry, {
      label,
      profile: ctx.settings.profile,
      env: {
        REDIS_URL: ctx.settings.redisUrl,
        AGENT_API_BASE_URL: s.agentBaseUrl,
        AGENT_API_KEY: s.agentApiKey,
        BENCH_SINK_URL: s.sinkUrl,
        QUEUE_PREFIX: prefix,
        WORKER_CONCURRENCY: String(concurrency),
        ...(record ? { BENCH_FLOOR_RECORD: '1' } : {}),
      },
    }),
  );
  return {
    kind: 'floor',
    prefix,
    async send(messageId, _conversation, text) {
      await queue.add('chat', { messageId, channelId: 'c1', instanceId: 'demo-helper', text });
    },
    ...pool,
    async close() {
      await pool.stopWorkers();
      await queue.close();
      await connection.quit();
      await deleteKeys(ctx.redis, prefix);
    },
  };
}

/** Opens a path of either kind. */
export function openPath(ctx: BenchContext, kind: PathKind, tag: string): Promise<GenericPath> {
  return kind === 'bridge' ? bridgePath(ctx, tag) : floorPath(ctx, tag);
}
