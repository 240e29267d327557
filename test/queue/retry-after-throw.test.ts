import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { ChatQueue, RETRY_AFTER_THROW, retryAfterThrowMs } from '../../src/queue/chat-queue.js';
import { newPrefix } from '../support/bridge-harness.js';
import { deleteKeys } from '../support/redis-cleanup.js';

const redis = new Redis();
const prefix = newPrefix('retry-throw');
afterAll(async () => {
  await deleteKeys(prefix);
  redis.disconnect();
});

/** A job whose processing threw (a Redis blip, not an agent error) is tried again soon, never minutes later. */
describe('the backoff after a throw', () => {
  it('is 1, 2, 4 s, then every 5 s', () => {
    expect([1, 2, 3, 4, 5, 10, 49].map(retryAfterThrowMs)).toEqual([1000, 2000, 4000, 5000, 5000, 5000, 5000]);
  });

  it('is what every queued job carries', async () => {
    const queue = new ChatQueue({ connection: redis, redis, prefix, keepCompleted: { age: 60, count: 10 }, keepFailed: { age: 60, count: 10 } });
    try {
      const m = { platform: 'web', conversationId: 'web:local:c1', instanceId: 'i', channelId: 'c1', userId: 'u' } as const;
      await queue.wake(m, 'm1', { jobId: 'web-m1' });
      expect((await queue.queue.getJob('web-m1'))?.opts.backoff).toEqual({ type: RETRY_AFTER_THROW });
    } finally {
      await queue.close();
    }
  });
});
