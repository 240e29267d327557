import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Mailbox, type Fence } from '../../src/queue/mailbox.js';
import type { ChatMessage } from '../../src/queue/types.js';
import { deleteKeys } from '../support/redis-cleanup.js';

// Each script called directly against the real Redis, under a prefix of this file's own.
const prefix = `test-mbox-${randomUUID().slice(0, 8)}:chat`;
let redis: Redis;
let mailbox: Mailbox;
beforeAll(() => {
  redis = new Redis('redis://127.0.0.1:6379');
  mailbox = new Mailbox({ redis, prefix });
});
beforeEach(() => deleteKeys(prefix));
afterAll(async () => {
  await deleteKeys(prefix);
  redis.disconnect();
});

let seq = 0;
function message(conversationId = 'web:local:c1', channelId = 'c1'): ChatMessage {
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

const unfenced = (jobId: string): Fence => ({ jobId, token: '' });

/** Gives a job a BullMQ-style lock (`<prefix>:<jobId>:lock` = token) and returns its fence. */
async function locked(jobId: string, token: string = randomUUID()): Promise<Fence> {
  await redis.set(mailbox.keys.jobLock(jobId), token, 'PX', 30_000);
  return { jobId, token };
}

describe('push', () => {
  it('stores a message once: a redelivery is a duplicate and writes nothing', async () => {
    const m = message();
    expect(await mailbox.push(m)).toEqual({ status: 'queued', pending: 1, held: false, behindRetry: false });
    expect(await mailbox.push(m)).toEqual({ status: 'duplicate', held: false });
    expect(await redis.lrange(mailbox.keys.mailbox(m.conversationId), 0, -1)).toEqual([m.messageId]);
    expect(await redis.get(mailbox.keys.seen('web', m.messageId))).toBe('queued');
  });

  it("takes a message an adapter claimed ('delivered'); only a queued one is a duplicate", async () => {
    const m = message();
    const seen = mailbox.keys.seen('web', m.messageId);
    await redis.set(seen, 'delivered', 'EX', 3_600);
    expect(await mailbox.push(m)).toEqual({ status: 'queued', pending: 1, held: false, behindRetry: false });
    expect(await redis.get(seen)).toBe('queued');
    // The mailbox's seen TTL (1 day) replaces the claim's hour.
    expect(await redis.ttl(seen)).toBeGreaterThan(3_600);
    expect(await mailbox.push(m)).toEqual({ status: 'duplicate', held: false });
    expect(await redis.lrange(mailbox.keys.mailbox(m.conversationId), 0, -1)).toEqual([m.messageId]);
  });

  it("counts the mark earlier versions wrote ('1') as queued", async () => {
    const m = message();
    await redis.set(mailbox.keys.seen('web', m.messageId), '1', 'EX', 60);
    expect(await mailbox.push(m)).toEqual({ status: 'duplicate', held: false });
    expect(await redis.exists(mailbox.keys.mailbox(m.conversationId))).toBe(0);
  });

  it("counts the channel's unfinished messages and refuses beyond the cap, storing nothing", async () => {
    const a = message('web:local:c1:t1');
    const b = message('web:local:c1:t2');
    const c = message('web:local:c1:t3');
    expect(await mailbox.push(a, 2)).toMatchObject({ status: 'queued', pending: 1 });
    expect(await mailbox.push(b, 2)).toMatchObject({ status: 'queued', pending: 2 });
    expect(await mailbox.push(c, 2)).toEqual({ status: 'busy', pending: 2 });
    expect(await redis.exists(mailbox.keys.seen('web', c.messageId))).toBe(0);
    expect(await redis.exists(mailbox.keys.mailbox(c.conversationId))).toBe(0);
    // Another channel is not affected.
    expect((await mailbox.push(message('web:local:c2', 'c2'), 2)).status).toBe('queued');
    // Finishing one frees a place.
    const fence = unfenced('job-a');
    const got = await mailbox.acquire(a.conversationId, fence);
    expect(got.status).toBe('ok');
    await mailbox.advance(a.conversationId, fence, { messageId: a.messageId, message: a });
    expect(await mailbox.push(c, 2)).toMatchObject({ status: 'queued', pending: 2 });
  });

  it('says when a job holds the conversation (it drains the message: no job needed), and when that job waits out a retry', async () => {
    const first = message('web:local:c1:held');
    expect(await mailbox.push(first)).toMatchObject({ status: 'queued', held: false });
    const fence = await locked('job-1');
    expect((await mailbox.acquire(first.conversationId, fence)).status).toBe('ok');
    const second = message('web:local:c1:held');
    expect(await mailbox.push(second)).toEqual({ status: 'queued', pending: 2, held: true, behindRetry: false });
    expect(await mailbox.push(second)).toEqual({ status: 'duplicate', held: true });
    // The head failed once and waits for its retry: a message behind it is worth explaining.
    await mailbox.record(first.conversationId, first.messageId, fence, { attempts: 1 });
    expect(await mailbox.push(message('web:local:c1:held'))).toMatchObject({ status: 'queued', held: true, behindRetry: true });
    // Once the holder drained everything the lease is free again: the next message needs a job.
    let next = await mailbox.advance(first.conversationId, fence, { messageId: first.messageId, message: first });
    while (next && next !== 'lost') next = await mailbox.advance(first.conversationId, fence, next);
    expect(await mailbox.push(message('web:local:c1:held'))).toMatchObject({ status: 'queued', held: false });
  });
});

describe('push with the job to queue (the lease reserved for it)', () => {
  it('reserves a free conversation for that job: later messages are held and queue none, until the job drains and releases it', async () => {
    const conversation = 'web:local:c1:reserved';
    const first = message(conversation);
    expect(await mailbox.push(first, 0, 'job-first')).toEqual({ status: 'queued', pending: 1, held: false, behindRetry: false });
    expect(await redis.get(mailbox.keys.lease(conversation))).toBe('job-first');
    // Before the job runs, the next message finds the conversation held: no job of its own.
    const second = message(conversation);
    expect(await mailbox.push(second, 0, 'job-second')).toEqual({ status: 'queued', pending: 2, held: true, behindRetry: false });
    expect(await redis.get(mailbox.keys.lease(conversation))).toBe('job-first');
    // Another job (a redelivery's, the sweep's) finds it held; the reserved job takes it.
    expect(await mailbox.acquire(conversation, unfenced('job-second'))).toEqual({ status: 'held', holder: 'job-first' });
    const fence = await locked('job-first');
    const got = await mailbox.acquire(conversation, fence);
    expect(got.status === 'ok' && got.head?.messageId).toBe(first.messageId);
    let next = await mailbox.advance(conversation, fence, { messageId: first.messageId, message: first });
    expect(next !== 'lost' && next?.messageId).toBe(second.messageId);
    next = await mailbox.advance(conversation, fence, { messageId: second.messageId, message: second });
    expect(next).toBeUndefined();
    expect(await redis.exists(mailbox.keys.lease(conversation))).toBe(0);
  });

  it("a redelivery whose conversation is reserved for its own job says 'not held' (queue that job again), one held by another job says held", async () => {
    const conversation = 'web:local:c1:redelivered';
    const m = message(conversation);
    await mailbox.push(m, 0, 'job-m');
    expect(await mailbox.push(m, 0, 'job-m')).toEqual({ status: 'duplicate', held: false });
    const later = message(conversation);
    await mailbox.push(later, 0, 'job-later');
    expect(await mailbox.push(later, 0, 'job-later')).toEqual({ status: 'duplicate', held: true });
    expect(await redis.get(mailbox.keys.lease(conversation))).toBe('job-m');
  });

  it('reserves nothing without a job ID (tools and tests that queue none)', async () => {
    const m = message('web:local:c1:no-job');
    expect(await mailbox.push(m)).toMatchObject({ status: 'queued', held: false });
    expect(await redis.exists(mailbox.keys.lease(m.conversationId))).toBe(0);
  });
});

describe('acquire', () => {
  it('when free: takes the lease and returns the head with its progress', async () => {
    const m = message();
    await mailbox.push(m);
    const r = await mailbox.acquire(m.conversationId, unfenced('job-1'));
    expect(r.status).toBe('ok');
    if (r.status !== 'ok') return;
    expect(r.head?.messageId).toBe(m.messageId);
    expect(r.head?.message).toEqual(m);
    expect(r.head?.progress).toEqual({ reply: undefined, posted: 0, attempts: 0, limited: 0, started: false, posting: undefined, agentMessageId: undefined });
    expect(await redis.get(mailbox.keys.lease(m.conversationId))).toBe('job-1');
  });

  it('when held by another job: names the holder and changes nothing', async () => {
    const m = message();
    await mailbox.push(m);
    await mailbox.acquire(m.conversationId, unfenced('job-1'));
    expect(await mailbox.acquire(m.conversationId, unfenced('job-2'))).toEqual({ status: 'held', holder: 'job-1' });
    expect(await redis.get(mailbox.keys.lease(m.conversationId))).toBe('job-1');
  });

  it('when already its own (a retried job): returns the head again', async () => {
    const m = message();
    await mailbox.push(m);
    await mailbox.acquire(m.conversationId, unfenced('job-1'));
    const again = await mailbox.acquire(m.conversationId, unfenced('job-1'));
    expect(again.status === 'ok' && again.head?.messageId).toBe(m.messageId);
  });

  it('on an empty mailbox: releases the lease', async () => {
    expect(await mailbox.acquire('web:local:nothing', unfenced('job-1'))).toEqual({ status: 'ok', head: undefined });
    expect(await redis.exists(mailbox.keys.lease('web:local:nothing'))).toBe(0);
  });

  it('with a stale lock token: refused, nothing written', async () => {
    const m = message();
    await mailbox.push(m);
    await locked('job-1', 'new-owner');
    expect(await mailbox.acquire(m.conversationId, { jobId: 'job-1', token: 'old-owner' })).toEqual({ status: 'lost' });
    expect(await redis.exists(mailbox.keys.lease(m.conversationId))).toBe(0);
    expect((await mailbox.acquire(m.conversationId, { jobId: 'job-1', token: 'new-owner' })).status).toBe('ok');
  });
});

describe('advance', () => {
  it('pops only a matching head and returns the next one with the lease renewed', async () => {
    const [a, b] = [message(), message()];
    await mailbox.push(a);
    await mailbox.push(b);
    const fence = unfenced('job-1');
    await mailbox.acquire(a.conversationId, fence);
    // Not the head: nothing popped, the head is returned again.
    const same = await mailbox.advance(a.conversationId, fence, { messageId: b.messageId, message: b });
    expect(same !== 'lost' && same?.messageId).toBe(a.messageId);
    const next = await mailbox.advance(a.conversationId, fence, { messageId: a.messageId, message: a });
    expect(next !== 'lost' && next?.messageId).toBe(b.messageId);
    expect(await redis.hexists(mailbox.keys.messages(a.conversationId), a.messageId)).toBe(0);
    expect(await redis.get(mailbox.keys.lease(a.conversationId))).toBe('job-1');
  });

  it('releases the lease when the mailbox is empty, and deletes the finished record whole', async () => {
    const m = message();
    await mailbox.push(m);
    const fence = unfenced('job-1');
    await mailbox.acquire(m.conversationId, fence);
    await mailbox.record(m.conversationId, m.messageId, fence, { reply: 'hi', posting: 0 });
    expect(await mailbox.advance(m.conversationId, fence, { messageId: m.messageId, message: m })).toBeUndefined();
    expect(await redis.exists(mailbox.keys.lease(m.conversationId))).toBe(0);
    expect(await redis.exists(mailbox.keys.messages(m.conversationId))).toBe(0);
    expect(await redis.exists(mailbox.keys.channelPending('web', 'c1'))).toBe(0);
  });

  it('refuses a stale lock token: the head stays, the lease is untouched', async () => {
    const m = message();
    await mailbox.push(m);
    const fence = await locked('job-1', 'mine');
    await mailbox.acquire(m.conversationId, fence);
    await redis.set(mailbox.keys.jobLock('job-1'), 'someone-else');
    expect(await mailbox.advance(m.conversationId, fence, { messageId: m.messageId, message: m })).toBe('lost');
    expect(await redis.lrange(mailbox.keys.mailbox(m.conversationId), 0, -1)).toEqual([m.messageId]);
    expect(await redis.get(mailbox.keys.lease(m.conversationId))).toBe('job-1');
  });
});

describe('acquire and advance starting the call (startCall)', () => {
  const started = (m: ChatMessage) => redis.hget(mailbox.keys.messages(m.conversationId), `${m.messageId}:started`);

  it("marks a fresh head started and renews the job's lock in the same round trip; the head shows its progress from before", async () => {
    const m = message();
    await mailbox.push(m);
    const fence = { ...(await locked('job-1')), lockDurationMs: 30_000 };
    await redis.pexpire(mailbox.keys.jobLock('job-1'), 2_000);
    await redis.sadd(mailbox.keys.stalled, 'job-1');
    const before = performance.now();
    const got = await mailbox.acquire(m.conversationId, fence, { startCall: true });
    if (got.status !== 'ok' || !got.head) throw new Error(`not acquired: ${got.status}`);
    expect(got.head.progress.started).toBe(false);
    expect(await started(m)).toBe('1');
    expect(await redis.pttl(mailbox.keys.jobLock('job-1'))).toBeGreaterThan(25_000);
    expect(await redis.sismember(mailbox.keys.stalled, 'job-1')).toBe(0);
    // Half the renewed lock, counted from before the read was sent.
    expect(got.head.callFencedUntil).toBeGreaterThanOrEqual(before + 15_000 - 1);
    expect(got.head.callFencedUntil).toBeLessThanOrEqual(performance.now() + 15_000);
  });

  it('marks nothing without startCall, unfenced, or without a lock duration', async () => {
    const m = message();
    await mailbox.push(m);
    const fence = await locked('job-1');
    for (const [f, options] of [
      [{ ...fence, lockDurationMs: 30_000 }, {}],
      [{ ...unfenced('job-1'), lockDurationMs: 30_000 }, { startCall: true }],
      [fence, { startCall: true }],
    ] as const) {
      const got = await mailbox.acquire(m.conversationId, f, options);
      expect(got.status === 'ok' && got.head?.callFencedUntil).toBeUndefined();
    }
    expect(await started(m)).toBeNull();
  });

  it('does not start a head whose reply is recorded (its posts resume), nor one for a stale token', async () => {
    const m = message();
    await mailbox.push(m);
    const fence = { ...(await locked('job-1')), lockDurationMs: 30_000 };
    expect(await mailbox.acquire(m.conversationId, { ...fence, token: 'old-owner' }, { startCall: true })).toEqual({ status: 'lost' });
    expect(await started(m)).toBeNull();
    await mailbox.acquire(m.conversationId, fence);
    expect(await mailbox.record(m.conversationId, m.messageId, fence, { reply: 'hello', posting: 0 })).toBe(true);
    const got = await mailbox.acquire(m.conversationId, fence, { startCall: true });
    expect(got.status === 'ok' && got.head?.callFencedUntil).toBeUndefined();
    expect(await started(m)).toBeNull();
  });

  it("advance starts the next message's call, and only reads it without startCall", async () => {
    const [a, b, c] = [message(), message(), message()];
    for (const m of [a, b, c]) await mailbox.push(m);
    const fence = { ...(await locked('job-1')), lockDurationMs: 30_000 };
    await mailbox.acquire(a.conversationId, fence);
    const next = await mailbox.advance(a.conversationId, fence, { messageId: a.messageId, message: a }, { startCall: true });
    if (!next || next === 'lost') throw new Error('no next head');
    expect(next.messageId).toBe(b.messageId);
    expect(next.callFencedUntil).toBeGreaterThan(performance.now());
    expect(await started(b)).toBe('1');
    const last = await mailbox.advance(a.conversationId, fence, next);
    expect(last !== 'lost' && last?.messageId).toBe(c.messageId);
    expect(last !== 'lost' && last?.callFencedUntil).toBeUndefined();
    expect(await started(c)).toBeNull();
  });
});

describe('advance at the end of a turn (turnOver)', () => {
  it('yields only when another job waits in line (waiting or prioritized); a yielded head is not started', async () => {
    const [a, b, c, d, e] = [message(), message(), message(), message(), message()];
    for (const m of [a, b, c, d, e]) await mailbox.push(m);
    const fence = { ...(await locked('job-1')), lockDurationMs: 30_000 };
    await mailbox.acquire(a.conversationId, fence);
    const started = (m: ChatMessage) => redis.hget(mailbox.keys.messages(m.conversationId), `${m.messageId}:started`);

    // Nobody in line: the turn goes on, and the next call is started as usual.
    const b1 = await mailbox.advance(a.conversationId, fence, { messageId: a.messageId, message: a }, { startCall: true, turnOver: true });
    if (!b1 || b1 === 'lost') throw new Error('no next head');
    expect(b1).toMatchObject({ messageId: b.messageId, yieldTurn: false });
    expect(await started(b)).toBe('1');

    // A plain job waits: yield, and the head is only read.
    await redis.lpush(mailbox.keys.wait, 'job-other');
    const c1 = await mailbox.advance(a.conversationId, fence, b1, { startCall: true, turnOver: true });
    if (!c1 || c1 === 'lost') throw new Error('no next head');
    expect(c1).toMatchObject({ messageId: c.messageId, yieldTurn: true });
    expect(c1.callFencedUntil).toBeUndefined();
    expect(await started(c)).toBeNull();

    // A prioritized job waits: yield too; without turnOver, never.
    await redis.del(mailbox.keys.wait);
    await redis.zadd(mailbox.keys.prioritized, 8, 'job-other');
    const d1 = await mailbox.advance(a.conversationId, fence, c1, { turnOver: false });
    if (!d1 || d1 === 'lost') throw new Error('no next head');
    expect(d1).toMatchObject({ messageId: d.messageId, yieldTurn: false });
    expect(await mailbox.advance(a.conversationId, fence, d1, { turnOver: true })).toMatchObject({ messageId: e.messageId, yieldTurn: true });
  });
});

describe('record', () => {
  it('writes progress and the answered mark while the lock is ours', async () => {
    const m = message();
    await mailbox.push(m);
    const fence = await locked('job-1');
    await mailbox.acquire(m.conversationId, fence);
    expect(await mailbox.record(m.conversationId, m.messageId, fence, { started: 1 })).toBe(true);
    expect(await mailbox.record(m.conversationId, m.messageId, fence, { reply: 'the answer', agentMessageId: 'a-1', posting: 0 }, { answered: true })).toBe(true);
    expect(await mailbox.isAnswered(m.conversationId)).toBe(true);
    const head = await mailbox.acquire(m.conversationId, fence);
    expect(head.status === 'ok' && head.head?.progress).toEqual({ reply: 'the answer', posted: 0, attempts: 0, limited: 0, started: true, posting: 0, agentMessageId: 'a-1' });
    // '' deletes a field.
    await mailbox.record(m.conversationId, m.messageId, fence, { started: '' });
    const after = await mailbox.acquire(m.conversationId, fence);
    expect(after.status === 'ok' && after.head?.progress.started).toBe(false);
  });

  it('refuses a stale token, an expired lock, and a finished message', async () => {
    const m = message();
    await mailbox.push(m);
    const fence = await locked('job-1', 'mine');
    await redis.set(mailbox.keys.jobLock('job-1'), 'taken-over');
    expect(await mailbox.record(m.conversationId, m.messageId, fence, { reply: 'late' }, { answered: true })).toBe(false);
    await redis.del(mailbox.keys.jobLock('job-1'));
    expect(await mailbox.record(m.conversationId, m.messageId, fence, { reply: 'late' })).toBe(false);
    expect(await redis.hexists(mailbox.keys.messages(m.conversationId), `${m.messageId}:reply`)).toBe(0);
    expect(await mailbox.isAnswered(m.conversationId)).toBe(false);
    // Finished (advanced by the job's new owner): no record comes back to life.
    const owner = await locked('job-1', 'owner');
    await mailbox.acquire(m.conversationId, owner);
    await mailbox.advance(m.conversationId, owner, { messageId: m.messageId, message: m });
    expect(await mailbox.record(m.conversationId, m.messageId, owner, { posted: 1 })).toBe(false);
    expect(await redis.exists(mailbox.keys.messages(m.conversationId))).toBe(0);
  });
});

describe('record, renewing and recording facts', () => {
  it('renews the lock like extendLock; a stale worker still records the chunk it posted, nothing else', async () => {
    const m = message();
    await mailbox.push(m);
    const fence = { ...(await locked('job-1', 'mine')), lockDurationMs: 120_000 };
    await redis.sadd(mailbox.keys.stalled, 'job-1');
    expect(await mailbox.record(m.conversationId, m.messageId, fence, { reply: 'hi', posting: 0 })).toBe(true);
    expect(await redis.pttl(mailbox.keys.jobLock('job-1'))).toBeGreaterThan(60_000);
    expect(await redis.sismember(mailbox.keys.stalled, 'job-1')).toBe(0);

    await redis.set(mailbox.keys.jobLock('job-1'), 'taken-over');
    expect(await mailbox.record(m.conversationId, m.messageId, fence, { posted: 1, posting: 1 })).toBe(false);
    const head = await mailbox.acquire(m.conversationId, { jobId: 'job-1', token: 'taken-over' });
    expect(head.status === 'ok' && head.head?.progress).toMatchObject({ posted: 1, posting: 0 });
    expect(await redis.get(mailbox.keys.jobLock('job-1'))).toBe('taken-over');
  });

  it("never moves 'posted' back: a stale worker's lower count does not hide chunks the new owner posted", async () => {
    const m = message();
    await mailbox.push(m);
    const owner = await locked('job-1', 'new-owner');
    expect(await mailbox.record(m.conversationId, m.messageId, owner, { reply: 'long', posted: 3, posting: 3 })).toBe(true);
    // The old worker wakes up and records the chunk it had posted before it froze.
    expect(await mailbox.record(m.conversationId, m.messageId, { jobId: 'job-1', token: 'old-owner' }, { posted: 1, posting: 1 })).toBe(false);
    const head = await mailbox.acquire(m.conversationId, owner);
    expect(head.status === 'ok' && head.head?.progress).toMatchObject({ posted: 3, posting: 3 });
  });
});

describe('takeOver', () => {
  it('moves the lease only from the named holder', async () => {
    const m = message();
    await mailbox.push(m);
    await mailbox.acquire(m.conversationId, unfenced('job-1'));
    expect(await mailbox.takeOver(m.conversationId, 'job-9', 'job-2')).toBe(false);
    expect(await redis.get(mailbox.keys.lease(m.conversationId))).toBe('job-1');
    expect(await mailbox.takeOver(m.conversationId, 'job-1', 'job-2')).toBe(true);
    expect(await redis.get(mailbox.keys.lease(m.conversationId))).toBe('job-2');
  });
});

describe('the sweep for stranded conversations', () => {
  it('lists a conversation no job took once it waited long enough, and not one a job holds or finished', async () => {
    const stranded = message('web:local:c1:stranded');
    const taken = message('web:local:c1:taken');
    const done = message('web:local:c1:done');
    for (const m of [stranded, taken, done]) await mailbox.push(m);
    await mailbox.acquire(taken.conversationId, unfenced('job-taken'));
    const fence = unfenced('job-done');
    await mailbox.acquire(done.conversationId, fence);
    await mailbox.advance(done.conversationId, fence, { messageId: done.messageId, message: done });

    // Too recent: a job may be on its way.
    expect(await mailbox.stranded(60_000, 100)).toEqual([]);
    const found = await mailbox.stranded(0, 100);
    expect(found.map((s) => [s.conversationId, s.messageId, s.message?.text])).toEqual([[stranded.conversationId, stranded.messageId, stranded.text]]);
    // Only the stranded one is still listed, re-scored so it is looked at again later.
    expect(await redis.zrange(mailbox.keys.stranded, '0', '-1')).toEqual([stranded.conversationId]);
    expect(await mailbox.stranded(60_000, 100)).toEqual([]);
  });

  it('a conversation whose lease is held is listed with its holder (whose job the sweep checks), until the holder moves on', async () => {
    const first = message('web:local:c1:busy');
    await mailbox.push(first);
    await mailbox.acquire(first.conversationId, unfenced('job-1'));
    const second = message('web:local:c1:busy');
    await mailbox.push(second);
    expect(await redis.zscore(mailbox.keys.stranded, first.conversationId)).not.toBeNull();
    const found = await mailbox.stranded(0, 100);
    expect(found.map((s) => [s.conversationId, s.holder, s.messageId])).toEqual([[first.conversationId, 'job-1', first.messageId]]);
    expect(await mailbox.stranded(60_000, 100)).toEqual([]);
    // The holder's next step takes it off the list.
    await mailbox.advance(first.conversationId, unfenced('job-1'), { messageId: first.messageId, message: first });
    expect(await redis.zscore(mailbox.keys.stranded, first.conversationId)).toBeNull();
  });
});

describe('drop-conversation (a workspace uninstalled the app)', () => {
  it("forgets the workspace's waiting conversations, stranded ones included, and leaves a held one and other workspaces alone", async () => {
    const waiting = message('slack:T1:C1:1.1', 'C1');
    const held = message('slack:T1:C1:2.2', 'C1');
    const other = message('slack:T2:C9:3.3', 'C9');
    for (const m of [waiting, held, other]) await mailbox.push(m);
    await mailbox.acquire(held.conversationId, await locked('job-held'));

    expect(await mailbox.dropConversations('slack:T1:', new Map())).toBe(1);
    expect(await redis.exists(mailbox.keys.mailbox(waiting.conversationId), mailbox.keys.messages(waiting.conversationId))).toBe(0);
    expect(await redis.zscore(mailbox.keys.stranded, waiting.conversationId)).toBeNull();
    // The held conversation is its job's to finish; the other workspace is untouched.
    expect(await redis.lrange(mailbox.keys.mailbox(held.conversationId), 0, -1)).toEqual([held.messageId]);
    expect(await redis.lrange(mailbox.keys.mailbox(other.conversationId), 0, -1)).toEqual([other.messageId]);
  });

  it('forgets a conversation reserved for a job the caller removed, and keeps one reserved for a job it did not', async () => {
    const removed = message('slack:T1:C1:4.4', 'C1');
    const kept = message('slack:T1:C1:5.5', 'C1');
    await mailbox.push(removed, 0, 'job-removed');
    await mailbox.push(kept, 0, 'job-kept');
    const jobs = new Map([[removed.conversationId, ['job-removed']], [kept.conversationId, ['job-other']]]);
    expect(await mailbox.dropConversations('slack:T1:', jobs)).toBe(1);
    expect(await redis.exists(mailbox.keys.mailbox(removed.conversationId), mailbox.keys.lease(removed.conversationId))).toBe(0);
    expect(await redis.lrange(mailbox.keys.mailbox(kept.conversationId), 0, -1)).toEqual([kept.messageId]);
    expect(await redis.get(mailbox.keys.lease(kept.conversationId))).toBe('job-kept');
  });
});
