import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { startPipeline, webMessage, type Pipeline } from '../support/pipeline.js';
import { sleep, until, watchProcessErrors } from './support/guards.js';
import { OwnRedis } from './support/redis-server.js';

/**
 * Redis out of memory (`maxmemory` reached under `noeviction`, as BullMQ requires): every write
 * is refused with `-OOM command not allowed` until memory is freed. A worker whose agent call
 * answers meanwhile holds a billed answer it cannot record. Before, the record failed at once,
 * the job was retried, and the retry (after memory was freed) called the agent again: each
 * message in flight was billed twice.
 */
let redis: OwnRedis | undefined;
let p: Pipeline | undefined;
let admin: Redis | undefined;
const guard = watchProcessErrors();

afterEach(async () => {
  await admin?.config('SET', 'maxmemory', '0').catch(() => {});
  admin?.disconnect();
  admin = undefined;
  await p?.close();
  p = undefined;
  await redis?.close();
  redis = undefined;
});

describe('Redis out of memory while agent calls run', () => {
  it('each answer that comes back is kept until Redis takes writes again, posted once, never asked twice', async () => {
    redis = await new OwnRedis({ appendonly: false }).start();
    admin = new Redis(redis.url);
    p = await startPipeline({ REDIS_URL: redis.url, LOG_LEVEL: 'info' });
    const pl = p;
    pl.agent.setDelay(1_000, { endpoint: 'chat' });
    const sent = Array.from({ length: 4 }, (_, i) => webMessage(`oom question ${i}`, { channelId: `oom${i}`, isDirect: true }));
    for (const m of sent) expect((await pl.bridge.ingress.handle(m)).status).toBe('queued');
    await until(() => pl.agent.openRequests() === sent.length || undefined, 'every call open at the agent');

    // Any write is refused from now on: the answers come back into a Redis that takes none.
    await admin.config('SET', 'maxmemory', '1');
    await until(() => pl.agent.openRequests() === 0 || undefined, 'every call answered');
    await sleep(2_000);
    expect(pl.sink.posts.filter((x) => x.kind === 'chunk')).toHaveLength(0);
    await admin.config('SET', 'maxmemory', '0');

    await until(() => sent.every((m) => pl.sink.posts.some((x) => x.kind === 'chunk' && x.messageId === m.messageId)) || undefined, 'every answer posted', 30_000);
    await sleep(1_000);
    for (const m of sent) {
      expect(pl.agent.chatCalls().filter((c) => c.message.includes(m.text))).toHaveLength(1);
      expect(pl.sink.posts.filter((x) => x.kind === 'chunk' && x.messageId === m.messageId)).toHaveLength(1);
    }
    // The operator reads what is wrong in plain words, not only BullMQ's raw reply.
    expect(pl.logs.matching(/Redis is out of memory \(maxmemory reached\)/).length).toBeGreaterThan(0);
    expect(guard.errors).toEqual([]);
  }, 60_000);

  it('longer than the 20 s a lost connection is waited out: the billed answer still waits, and is asked once', async () => {
    redis = await new OwnRedis({ appendonly: false }).start();
    admin = new Redis(redis.url);
    p = await startPipeline({ REDIS_URL: redis.url, LOG_LEVEL: 'info' });
    const pl = p;
    pl.agent.setDelay(500, { endpoint: 'chat' });
    const sent = Array.from({ length: 2 }, (_, i) => webMessage(`long oom question ${i}`, { channelId: `longoom${i}`, isDirect: true }));
    for (const m of sent) expect((await pl.bridge.ingress.handle(m)).status).toBe('queued');
    await until(() => pl.agent.openRequests() === sent.length || undefined, 'every call open at the agent');
    await admin.config('SET', 'maxmemory', '1');
    await sleep(23_000);
    expect(pl.sink.posts.filter((x) => x.kind === 'chunk')).toHaveLength(0);
    await admin.config('SET', 'maxmemory', '0');

    await until(() => sent.every((m) => pl.sink.posts.some((x) => x.kind === 'chunk' && x.messageId === m.messageId)) || undefined, 'every answer posted', 60_000);
    await sleep(1_000);
    for (const m of sent) {
      expect(pl.agent.chatCalls().filter((c) => c.message.includes(m.text))).toHaveLength(1);
      expect(pl.sink.posts.filter((x) => x.kind === 'chunk' && x.messageId === m.messageId)).toHaveLength(1);
    }
    expect(guard.errors).toEqual([]);
  }, 120_000);
});
