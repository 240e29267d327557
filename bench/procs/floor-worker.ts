/**
 * The floor: a bare BullMQ Worker that makes the same two HTTP calls as the bridge (agent
 * emulator `POST /chat` with X-API-Key, then the sink) and nothing else.
 */
import { Worker } from 'bullmq';
import { Agent, request } from 'undici';
import { Redis } from 'ioredis';
import { ready, serve } from '../lib/ipc.js';
import { BENCH_QUEUE, type FloorJob } from './floor-job.js';
import { exitSoon, probeHandlers } from './probe.js';

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is missing`);
  return v;
};
const agentUrl = `${env('AGENT_API_BASE_URL')}/chat`;
const apiKey = env('AGENT_API_KEY');
const sinkUrl = `${env('BENCH_SINK_URL')}/post`;

// The agent call uses the same HTTP client and settings as the bridge's agent client
// (src/agent-api/agent-pool.ts): undici request, keep-alive, no cap on connections.
const dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: null, headersTimeout: 0, bodyTimeout: 0 });
const connection = new Redis(env('REDIS_URL'), { maxRetriesPerRequest: null });
const worker = new Worker<FloorJob>(
  BENCH_QUEUE,
  async (job) => {
    const agent = await request(agentUrl, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ instanceId: job.data.instanceId, message: job.data.text }),
      dispatcher,
    });
    const { response } = (await agent.body.json()) as { response: string };
    if (agent.statusCode !== 200) throw new Error(`agent answered ${agent.statusCode}`);
    const post = await fetch(sinkUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'chunk', channelId: job.data.channelId, messageId: job.data.messageId, index: 0, text: response }),
    });
    await post.arrayBuffer();
    if (!post.ok) throw new Error(`sink answered ${post.status}`);
  },
  { connection, prefix: env('QUEUE_PREFIX'), concurrency: Number(env('WORKER_CONCURRENCY')) },
);
worker.on('error', (err) => console.error(`floor worker error: ${err.message}`));
await worker.waitUntilReady();

serve({
  ...probeHandlers(),
  stop: async () => {
    await worker.close();
    await connection.quit();
    exitSoon();
  },
});
ready();
