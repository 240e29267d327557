import { afterEach, describe, expect, it } from 'vitest';
import { startPipeline, webMessage, type Pipeline } from '../support/pipeline.js';
import { sleep, until, watchProcessErrors } from './support/guards.js';
import { OwnRedis } from './support/redis-server.js';

/**
 * Redis restarted WITHOUT persistence while messages are in flight and queued: all its data is
 * gone (redis-restart.test.ts covers a restart with AOF). The bridge keeps running, posts the
 * answers it holds (once), calls the agent at most once per message, takes new messages, and
 * tells the operator in one line that Redis lost its data: the queued messages are gone and
 * their senders were not told. Before, the log said only "Redis connection is back: the queue
 * works again".
 */
let redis: OwnRedis | undefined;
let p: Pipeline | undefined;
const guard = watchProcessErrors();

afterEach(async () => {
  await p?.close();
  p = undefined;
  await redis?.close();
  redis = undefined;
});

const chunksOf = (pl: Pipeline, messageId: string) => pl.sink.posts.filter((x) => x.kind === 'chunk' && x.messageId === messageId);

describe('Redis restarted without persistence', () => {
  it('answers in hand are posted once, nothing is asked twice, new messages are answered, and the log says the data was lost', async () => {
    redis = await new OwnRedis({ appendonly: false }).start();
    p = await startPipeline({ REDIS_URL: redis.url, LOG_LEVEL: 'info', WORKER_CONCURRENCY: '2' });
    const pl = p;
    pl.agent.setDelay(1_500, { endpoint: 'chat' });
    const before = Array.from({ length: 6 }, (_, i) => webMessage(`before ${i}`, { channelId: `lost${i}`, isDirect: true }));
    for (const m of before) expect((await pl.bridge.ingress.handle(m)).status).toBe('queued');
    await until(() => pl.agent.openRequests() === 2 || undefined, 'two calls open at the agent');

    await redis.stop('SIGKILL');
    await sleep(500);
    await redis.start();
    await until(() => pl.logs.matching(/Redis connection is back/).length > 0 || undefined, 'the bridge reconnected', 30_000);

    const after = Array.from({ length: 3 }, (_, i) => webMessage(`after ${i}`, { channelId: `lost${i}`, isDirect: true }));
    for (const m of after) expect((await pl.bridge.ingress.handle(m)).status).toBe('queued');
    await until(() => after.every((m) => chunksOf(pl, m.messageId).length > 0) || undefined, 'every message after the restart answered', 30_000);
    await sleep(1_000);

    for (const m of after) expect(chunksOf(pl, m.messageId)).toHaveLength(1);
    for (const m of [...before, ...after]) {
      expect(pl.agent.chatCalls().filter((c) => c.message.includes(m.text)).length).toBeLessThanOrEqual(1);
      expect(chunksOf(pl, m.messageId).length).toBeLessThanOrEqual(1);
    }
    // The two calls under way when Redis died: their answers are in hand, and posted.
    expect(before.filter((m) => chunksOf(pl, m.messageId).length === 1).length).toBeGreaterThanOrEqual(2);
    const told = pl.logs.matching(/^Redis came back without its data/);
    expect(told).toHaveLength(1);
    expect(told[0]!.level).toBe(50);
    expect(told[0]!.msg).toMatch(/messages queued before are lost and their senders were not told/);
    // BullMQ's "Missing key for job …" (twice per job in flight) is one plain line a minute.
    expect(pl.logs.matching(/^worker error$/).filter((l) => /Missing key/.test(JSON.stringify(l)))).toEqual([]);
    expect(pl.logs.matching(/^jobs vanished from Redis while this worker ran them/).length).toBeLessThanOrEqual(1);
    expect(guard.errors).toEqual([]);
  }, 90_000);

  it('with persistence (AOF), a restart keeps the data and says nothing of a loss', async () => {
    redis = await new OwnRedis({ appendonly: true }).start();
    p = await startPipeline({ REDIS_URL: redis.url, LOG_LEVEL: 'info' });
    const pl = p;
    const first = webMessage('kept 1', { channelId: 'kept', isDirect: true });
    expect((await pl.bridge.ingress.handle(first)).status).toBe('queued');
    await until(() => chunksOf(pl, first.messageId).length > 0 || undefined, 'the first message answered');
    await redis.stop('SIGKILL');
    await sleep(500);
    await redis.start();
    await until(() => pl.logs.matching(/Redis connection is back/).length > 0 || undefined, 'the bridge reconnected', 30_000);
    const second = webMessage('kept 2', { channelId: 'kept', isDirect: true });
    expect((await pl.bridge.ingress.handle(second)).status).toBe('queued');
    await until(() => chunksOf(pl, second.messageId).length > 0 || undefined, 'the second message answered', 30_000);
    expect(pl.logs.matching(/without its data/)).toEqual([]);
  }, 90_000);
});
