import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ChatQueue } from '../../src/queue/chat-queue.js';
import { PushAdd, jobPriority, pushAddLua } from '../../src/queue/push-add.js';
import { backlogPriority } from '../../src/queue/priority.js';
import { Mailbox } from '../../src/queue/mailbox.js';
import { QUEUE_NAME, jobIdFor } from '../../src/queue/types.js';
import { deleteKeys } from '../support/redis-cleanup.js';
import { message } from './mailbox-fixture.js';

/**
 * The ingress's push and its job's add in one round trip (src/queue/push-add.ts), through a
 * real BullMQ Queue on the real Redis: the job is added exactly where the two separate steps
 * would add it, never before its message, and a backlogged channel's job still gets its priority.
 */

let prefix: string;
let redis: Redis;
let queue: ChatQueue;

const makeQueue = (maxPendingPerChannel = 0) =>
  new ChatQueue({ connection: redis.duplicate(), redis, prefix, keepCompleted: { age: 60, count: 10 }, keepFailed: { age: 60, count: 10 }, maxPendingPerChannel });

beforeAll(() => {
  redis = new Redis('redis://127.0.0.1:6379');
});
beforeEach(() => {
  prefix = `test-push-add-${randomUUID().slice(0, 8)}`;
  queue = makeQueue();
});
afterEach(async () => {
  await queue.close();
  await deleteKeys(prefix);
});
afterAll(() => redis.disconnect());

const jobOf = (m: { messageId: string }) => jobIdFor('web', m.messageId);

describe('push and add in one round trip', () => {
  it('a message in a free conversation: one script stores it, reserves the conversation and adds its plain job', async () => {
    const m = message('web:local:free', 'c-free');
    expect(await queue.enqueue(m)).toEqual({ status: 'queued', jobId: jobOf(m) });
    expect(queue.pushAdd.counts).toEqual({ fused: 1, separate: 0 });
    expect(await queue.queue.getJobState(jobOf(m))).toBe('waiting');
    const k = queue.mailbox.keys;
    expect(await redis.lrange(k.mailbox(m.conversationId), 0, -1)).toEqual([m.messageId]);
    expect(await redis.get(k.lease(m.conversationId))).toBe(jobOf(m));
    expect(await redis.zscore(k.stranded, m.conversationId)).not.toBeNull();
    expect((await queue.queue.getJob(jobOf(m)))?.data).toMatchObject({ conversationId: m.conversationId, messageId: m.messageId });
  });

  it('a message of a conversation its job holds already: stored, no job added', async () => {
    const first = message('web:local:held', 'c-held');
    const second = message('web:local:held', 'c-held');
    await queue.enqueue(first);
    // Another channel's message keeps this channel's backlog out of it: the second is held.
    const result = await queue.enqueue(second);
    expect(result).toMatchObject({ status: 'queued', jobId: jobOf(second) });
    expect(queue.pushAdd.counts.fused).toBe(2);
    expect(await queue.queue.getJobState(jobOf(second))).toBe('unknown');
    expect((await queue.counts()).waiting).toBe(1);
    expect(await redis.lrange(queue.mailbox.keys.mailbox(first.conversationId), 0, -1)).toEqual([first.messageId, second.messageId]);
  });

  it("a channel with a backlog: the same script adds the job with the backlog's priority, as the worker computes it", async () => {
    const messages = Array.from({ length: 9 }, (_, i) => message(`web:local:busy-${i}`, 'c-busy'));
    for (const m of messages) expect(await queue.enqueue(m)).toEqual({ status: 'queued', jobId: jobOf(m) });
    expect(queue.pushAdd.counts).toEqual({ fused: 9, separate: 0 });
    expect(await queue.queue.getJobState(jobOf(messages[0]!))).toBe('waiting');
    for (const [i, m] of messages.entries()) {
      if (i === 0) continue;
      expect(await queue.queue.getJobState(jobOf(m))).toBe('prioritized');
      const job = await queue.queue.getJob(jobOf(m));
      // The backlog counts this message: 2, 3, 4, ... → priorities 2, 2, 4, 4, 4, 4, 8, 8.
      expect(job?.priority).toBe(backlogPriority(i + 1));
      expect(job?.data).toMatchObject({ conversationId: m.conversationId, messageId: m.messageId });
      expect(await redis.get(queue.mailbox.keys.lease(m.conversationId))).toBe(jobOf(m));
    }
    // BullMQ's order among them: by priority, then by when each was added.
    const order = (await queue.queue.getPrioritized()).map((j) => j.id);
    expect(order).toEqual([2, 1, 4, 3, 5, 6, 8, 7].map((i) => jobOf(messages[i]!)).sort((a, b) => order.indexOf(a) - order.indexOf(b)));
  });

  it('a redelivery: nothing stored twice, and its job is added again (a no-op while it exists)', async () => {
    const m = message('web:local:again', 'c-again');
    await queue.enqueue(m);
    expect(await queue.enqueue(m)).toEqual({ status: 'duplicate', jobId: jobOf(m) });
    expect(queue.pushAdd.counts.fused).toBe(2);
    expect((await queue.counts()).waiting).toBe(1);
    expect(await redis.llen(queue.mailbox.keys.mailbox(m.conversationId))).toBe(1);
  });

  it('a redelivery whose job was lost (the process died between the steps) gets its job back', async () => {
    const m = message('web:local:healed', 'c-healed');
    // The push alone, as a process that died before queueing the job would have left it.
    await queue.mailbox.push(m, 0, jobOf(m));
    expect(await queue.queue.getJobState(jobOf(m))).toBe('unknown');
    expect(await queue.enqueue(m)).toEqual({ status: 'duplicate', jobId: jobOf(m) });
    expect(await queue.queue.getJobState(jobOf(m))).toBe('waiting');
  });

  it('a channel at its cap: refused, nothing stored and no job', async () => {
    await queue.close();
    queue = makeQueue(1);
    const first = message('web:local:cap-1', 'c-cap');
    const refused = message('web:local:cap-2', 'c-cap');
    await queue.enqueue(first);
    expect(await queue.enqueue(refused)).toEqual({ status: 'busy', pending: 1 });
    expect(await queue.queue.getJobState(jobOf(refused))).toBe('unknown');
    expect(await redis.exists(queue.mailbox.keys.mailbox(refused.conversationId))).toBe(0);
    expect(await redis.exists(queue.mailbox.keys.lease(refused.conversationId))).toBe(0);
  });

  it("another caller's add of the same job ID while no push waits is BullMQ's own", async () => {
    const m = message('web:local:wake', 'c-wake');
    await queue.wake(m, m.messageId, { jobId: jobOf(m) });
    expect(queue.pushAdd.counts).toEqual({ fused: 0, separate: 0 });
    expect(await queue.queue.getJobState(jobOf(m))).toBe('waiting');
    expect(await redis.llen(queue.mailbox.keys.mailbox(m.conversationId))).toBe(0);
  });

  it('concurrent messages of many conversations each get their own result and job', async () => {
    const messages = Array.from({ length: 40 }, (_, i) => message(`web:local:many-${i}`, `c-many-${i}`));
    const results = await Promise.all(messages.map((m) => queue.enqueue(m)));
    expect(results).toEqual(messages.map((m) => ({ status: 'queued', jobId: jobOf(m) })));
    expect(queue.pushAdd.counts.fused).toBe(40);
    expect((await queue.counts()).waiting).toBe(40);
  });
});

describe('PushAdd without the fused road', () => {
  it('an add that never reaches BullMQ\'s addStandardJob: the push still happens, after it', async () => {
    const mailbox = new Mailbox({ redis, prefix: `${prefix}:${QUEUE_NAME}` });
    const pushAdd = new PushAdd(mailbox);
    const m = message('web:local:plain', 'c-plain');
    const added: number[] = [];
    const pushed = await pushAdd.push(mailbox.pushCall(m, 0, jobOf(m)), jobOf(m), async (priority) => {
      added.push(priority);
    });
    expect(added).toEqual([0]);
    expect(pushed).toMatchObject({ status: 'queued', pending: 1, held: false });
    expect(pushAdd.counts).toEqual({ fused: 0, separate: 1 });
    expect(await redis.lrange(mailbox.keys.mailbox(m.conversationId), 0, -1)).toEqual([m.messageId]);
  });

  it('the job a push asks for: none, plain or with the backlog as priority (the rule push-add.lua follows)', () => {
    expect(jobPriority({ status: 'queued', pending: 1, held: false, behindRetry: false })).toBe(0);
    expect(jobPriority({ status: 'queued', pending: 5, held: false, behindRetry: false })).toBe(4);
    expect(jobPriority({ status: 'queued', pending: 1, held: true, behindRetry: false })).toBeUndefined();
    expect(jobPriority({ status: 'duplicate', held: false })).toBe(0);
    expect(jobPriority({ status: 'duplicate', held: true })).toBeUndefined();
    expect(jobPriority({ status: 'busy', pending: 3 })).toBeUndefined();
    const lua = pushAddLua()!;
    expect(lua).toContain('local function addPlain(KEYS, ARGV)');
    expect(lua).toContain('local function addPrioritized(KEYS, ARGV)');
    expect(lua).toContain('local function pushMessage(K, A)');
    expect(lua).toMatch(/local ownKeys, own = 10, 4/);
  });
});
