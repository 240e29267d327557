/**
 * A 10,000-message flood in one channel, as issue 12 (item 4) describes it: what it leaves in
 * memory and how long a question in another channel waits meanwhile. Two runs: the default
 * per-channel cap (MAX_PENDING_PER_CHANNEL=200) and no cap (0). Quotas off in both.
 *
 *   npx tsx bench/flood.ts            (FLOOD_MESSAGES, FLOOD_AGENT_MS to change the sizes)
 *
 * Prints one JSON line per run. Memory figures are counts of bytes, so a busy machine does
 * not change them; the quiet channel's wait does depend on the machine.
 */
import { Redis } from 'ioredis';
import { startPipeline, webMessage, type Pipeline } from '../test/support/pipeline.js';

const MESSAGES = Number(process.env.FLOOD_MESSAGES ?? 10_000);
const AGENT_MS = Number(process.env.FLOOD_AGENT_MS ?? 1_000);
const THREADS = 100;

async function redisBytes(redis: Redis, prefix: string): Promise<{ keys: number; bytes: number }> {
  let keys = 0;
  let bytes = 0;
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    for (const key of batch) {
      keys++;
      bytes += (await redis.memory('USAGE', key)) ?? 0;
    }
  } while (cursor !== '0');
  return { keys, bytes };
}

async function flood(cap: string): Promise<Record<string, unknown>> {
  const pipeline: Pipeline = await startPipeline({ MAX_PENDING_PER_CHANNEL: cap, WORKER_CONCURRENCY: '50', LOG_LEVEL: 'warn' });
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  try {
    pipeline.agent.setDelay(AGENT_MS, { endpoint: 'chat' });
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const statuses: Record<string, number> = {};
    // The flood: THREADS threads of one channel, sent as fast as ingress takes them.
    for (let i = 0; i < MESSAGES; i += 200) {
      const batch = Array.from({ length: Math.min(200, MESSAGES - i) }, (_, k) => webMessage(`flood ${i + k}`, { channelId: 'c1', threadId: `t${(i + k) % THREADS}` }));
      for (const result of await Promise.all(batch.map((m) => pipeline.bridge.ingress.handle(m)))) {
        const label = result.status === 'dropped' ? `dropped:${result.reason}` : result.status;
        statuses[label] = (statuses[label] ?? 0) + 1;
      }
    }
    const held = await redisBytes(redis, pipeline.prefix);
    const rssAfterFlood = process.memoryUsage().rss;
    const quiet = webMessage('a quiet question', { channelId: 'c2' });
    const sentAt = performance.now();
    await pipeline.bridge.ingress.handle(quiet);
    await pipeline.sink.waitFor((posts) => posts.some((p) => p.messageId === quiet.messageId), 300_000);
    const quietWaitMs = Math.round(performance.now() - sentAt);
    return {
      cap: Number(cap),
      messages: MESSAGES,
      agentMs: AGENT_MS,
      statuses,
      redisKeys: held.keys,
      redisBytes: held.bytes,
      redisBytesPerAcceptedMessage: Math.round(held.bytes / Math.max(1, statuses.queued ?? 0)),
      rssGrowthMB: Math.round((rssAfterFlood - rssBefore) / 1e6),
      quietWaitMs,
      quietWaitInAgentLatencies: Number((quietWaitMs / AGENT_MS).toFixed(1)),
    };
  } finally {
    redis.disconnect();
    await pipeline.close();
  }
}

for (const cap of ['200', '0']) console.log(JSON.stringify(await flood(cap)));
process.exit(0);
