import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { Mailbox, type Fence } from '../../src/queue/mailbox.js';
import type { ChatMessage } from '../../src/queue/types.js';
import { deleteKeys } from '../support/redis-cleanup.js';

/**
 * The mailbox's scripts called directly against the real Redis, under a key prefix of the
 * calling test file's own (emptied before each test). `ctx` is filled in before the tests run.
 */
export function useMailbox(name: string) {
  const prefix = `test-${name}-${randomUUID().slice(0, 8)}:chat`;
  const ctx = {} as { redis: Redis; mailbox: Mailbox };
  beforeAll(() => {
    ctx.redis = new Redis('redis://127.0.0.1:6379');
    ctx.mailbox = new Mailbox({ redis: ctx.redis, prefix });
  });
  beforeEach(() => deleteKeys(prefix));
  afterAll(async () => {
    await deleteKeys(prefix);
    ctx.redis.disconnect();
  });

  /** Gives a job a BullMQ-style lock (`<prefix>:<jobId>:lock` = token) and returns its fence. */
  const locked = async (jobId: string, token: string = randomUUID()): Promise<Fence> => {
    await ctx.redis.set(ctx.mailbox.keys.jobLock(jobId), token, 'PX', 30_000);
    return { jobId, token };
  };
  return { ctx, locked };
}

let seq = 0;
/** A new playground message (IDs m1, m2, … in the order made). */
export function message(conversationId = 'web:local:c1', channelId = 'c1'): ChatMessage {
  seq++;
  return {
    platform: 'web',
    messageId: `m${seq}`,
    conversationId,
    workspaceId: 'local',
    channelId,
    instanceId: 'inst-1',
    text: `text ${seq}`,
    userId: 'u1',
    reply: { channelId, messageId: `m${seq}` },
    receivedAt: Date.now(),
    errorPolicy: 'reply',
    context: 'off',
  };
}

export const unfenced = (jobId: string): Fence => ({ jobId, token: '' });
