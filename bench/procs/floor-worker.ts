/**
 * The floor: a bare BullMQ Worker that makes the same two HTTP calls as the bridge (agent
 * emulator `POST /chat` with X-API-Key, then the sink) and nothing else.
 */
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { request } from 'undici';
import { ready } from '../lib/ipc.js';
import { BENCH_QUEUE, type FloorJob } from './floor-job.js';
import { plainAgentCall, requiredEnv } from './plain-bot.js';
import { serveProbesUntilStop } from './probe.js';
import { answerRecorder } from './floor-record.js';

const sinkUrl = `${requiredEnv('BENCH_SINK_URL')}/post`;

// The agent call uses the same HTTP client and settings as the bridge's agent client.
const askAgent = plainAgentCall();
const connection = new Redis(requiredEnv('REDIS_URL'), { maxRetriesPerRequest: null });
const prefix = requiredEnv('QUEUE_PREFIX');
const recordAnswer = process.env.BENCH_FLOOR_RECORD === '1' ? answerRecorder(connection, prefix) : undefined;
const worker = new Worker<FloorJob>(
  BENCH_QUEUE,
  async (job, token) => {
    const response = await askAgent(job.data.instanceId, job.data.text);
    if (recordAnswer) await recordAnswer(job.id!, token ?? '', job.data, response);
    // Posted like the bridge's sink port (test/support/sink.ts): undici's request, keep-alive.
    const post = await request(sinkUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'chunk', channelId: job.data.channelId, messageId: job.data.messageId, index: 0, text: response }),
    });
    await post.body.dump();
    if (post.statusCode !== 200) throw new Error(`sink answered ${post.statusCode}`);
  },
  { connection, prefix, concurrency: Number(requiredEnv('WORKER_CONCURRENCY')) },
);
worker.on('error', (err) => console.error(`floor worker error: ${err.message}`));
// A failed job is a lost message (the floor never retries): say which and why.
worker.on('failed', (job, err) => console.error(`floor job ${job?.id ?? '?'} failed: ${err.message} ${String((err as { cause?: unknown }).cause ?? '')}`));
await worker.waitUntilReady();

serveProbesUntilStop(
  () => worker.close(),
  () => connection.quit(),
);
ready();
