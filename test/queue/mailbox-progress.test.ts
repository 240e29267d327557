import type { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Mailbox } from '../../src/queue/mailbox.js';
import type { ChatMessage } from '../../src/queue/types.js';
import { message, unfenced, useMailbox } from './mailbox-fixture.js';

// What the worker's fenced steps write: the call started by the read that returns a message,
// the end of a turn, and each recorded step.
const { ctx, locked } = useMailbox('mbox-progress');
let redis: Redis;
let mailbox: Mailbox;
beforeAll(() => ({ redis, mailbox } = ctx));

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
    expect(got.head.progress.started).toBe(0);
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

  it('counts the starts of a call that recorded no answer: the first read marks it, later owners mark it themselves right before calling', async () => {
    const [a, b] = [message(), message()];
    for (const m of [a, b]) await mailbox.push(m);
    // The first owner's read marks the call started (and fences it): the head shows the count from before.
    const first = { ...(await locked('job-1', 'first')), lockDurationMs: 30_000 };
    const got1 = await mailbox.acquire(a.conversationId, first, { startCall: true });
    expect(got1.status === 'ok' && got1.head?.progress.started).toBe(0);
    expect(got1.status === 'ok' && got1.head?.callFencedUntil).toBeGreaterThan(0);
    expect(await started(a)).toBe('1');
    // It died during the call. The next owners' reads mark nothing (one killed before calling must
    // not count as a call); each marks its own call with a fenced write, as the worker does.
    for (const [i, token] of ['second', 'third'].entries()) {
      const fence = { ...(await locked('job-1', token)), lockDurationMs: 30_000 };
      const got = await mailbox.acquire(a.conversationId, fence, { startCall: true });
      expect(got.status === 'ok' && got.head?.progress.started).toBe(i + 1);
      expect(got.status === 'ok' && got.head?.callFencedUntil).toBeUndefined();
      expect(await started(a)).toBe(String(i + 1));
      expect(await mailbox.record(a.conversationId, a.messageId, fence, { started: i + 2 })).toBe(true);
    }
    // A call answered with an error takes its own start back (the worker records the count from before it).
    const fence = { ...(await locked('job-1', 'fourth')), lockDurationMs: 30_000 };
    const got = await mailbox.acquire(a.conversationId, fence, { startCall: true });
    expect(got.status === 'ok' && got.head?.progress.started).toBe(3);
    expect(await mailbox.record(a.conversationId, a.messageId, fence, { attempts: 1, started: 3 })).toBe(true);
    // An answer ends the counting (a head with a reply is not started), and advance forgets it.
    expect(await mailbox.record(a.conversationId, a.messageId, fence, { reply: 'at last', posting: 0 })).toBe(true);
    const again = await mailbox.acquire(a.conversationId, fence, { startCall: true });
    expect(again.status === 'ok' && again.head?.progress).toMatchObject({ started: 3, reply: 'at last' });
    expect(await started(a)).toBe('3');
    // advance too: the next head starts from nothing, the finished one's count is gone.
    const next = await mailbox.advance(a.conversationId, fence, { messageId: a.messageId, message: a }, { startCall: true });
    expect(next !== 'lost' && next?.progress.started).toBe(0);
    expect(await started(b)).toBe('1');
    expect(await started(a)).toBeNull();
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

  it('handBack (a draining worker): yields whenever a next head waits, with nobody in line, and starts nothing; the lease stays the job\'s', async () => {
    const [a, b] = [message(), message()];
    for (const m of [a, b]) await mailbox.push(m);
    const fence = { ...(await locked('job-1')), lockDurationMs: 30_000 };
    await mailbox.acquire(a.conversationId, fence);
    const b1 = await mailbox.advance(a.conversationId, fence, { messageId: a.messageId, message: a }, { startCall: true, turnOver: false, handBack: true });
    if (!b1 || b1 === 'lost') throw new Error('no next head');
    expect(b1).toMatchObject({ messageId: b.messageId, yieldTurn: true });
    expect(b1.callFencedUntil).toBeUndefined();
    expect(await redis.hget(mailbox.keys.messages(b.conversationId), `${b.messageId}:started`)).toBeNull();
    expect(await redis.get(mailbox.keys.lease(a.conversationId))).toBe('job-1');
    // The last message: the conversation is released as usual.
    expect(await mailbox.advance(a.conversationId, fence, b1, { startCall: true, handBack: true })).toBeUndefined();
    expect(await redis.get(mailbox.keys.lease(a.conversationId))).toBeNull();
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
    expect(head.status === 'ok' && head.head?.progress).toEqual({ reply: 'the answer', posted: 0, attempts: 0, limited: 0, started: 1, posting: 0, agentMessageId: 'a-1' });
    // '' deletes a field.
    await mailbox.record(m.conversationId, m.messageId, fence, { started: '' });
    const after = await mailbox.acquire(m.conversationId, fence);
    expect(after.status === 'ok' && after.head?.progress.started).toBe(0);
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

describe('retakeLock', () => {
  it('sets a lapsed lock back for a job still active, out of the stalled set; never over a lock, never for a job not active', async () => {
    const fence = { jobId: 'job-r', token: 'mine' };
    const lock = mailbox.keys.jobLock('job-r');
    expect(await mailbox.retakeLock(fence, 30_000)).toBe(false);
    await redis.lpush(mailbox.keys.active, 'job-r');
    await redis.sadd(mailbox.keys.stalled, 'job-r');
    await redis.set(lock, 'theirs');
    expect(await mailbox.retakeLock(fence, 30_000)).toBe(false);
    expect(await redis.get(lock)).toBe('theirs');
    await redis.del(lock);
    expect(await mailbox.retakeLock(fence, 30_000)).toBe(true);
    expect(await redis.get(lock)).toBe('mine');
    expect(await redis.pttl(lock)).toBeGreaterThan(20_000);
    expect(await redis.sismember(mailbox.keys.stalled, 'job-r')).toBe(0);
    await redis.del(mailbox.keys.active, lock);
  });
});

describe('record, renewing and recording facts', () => {
  it("says 'gone' when Redis lost the message with its seen mark; a finished message (its mark kept) is refused as before", async () => {
    const [finished, lost] = [message(), message()];
    for (const m of [finished, lost]) await mailbox.push(m);
    const fence = { ...(await locked('job-1', 'mine')), lockDurationMs: 60_000 };
    await mailbox.acquire(finished.conversationId, fence);
    await mailbox.advance(finished.conversationId, fence, { messageId: finished.messageId, message: finished });
    expect(await mailbox.record(finished.conversationId, finished.messageId, fence, { posted: 1 })).toBe(false);
    // Redis restarted without persistence: the record and the seen mark are gone.
    await redis.hdel(mailbox.keys.messages(lost.conversationId), lost.messageId);
    await redis.del(mailbox.keys.seen('web', lost.messageId));
    expect(await mailbox.record(lost.conversationId, lost.messageId, fence, { reply: 'in hand', posting: 0 })).toBe('gone');
    expect(await redis.hexists(mailbox.keys.messages(lost.conversationId), `${lost.messageId}:reply`)).toBe(0);
  });

  it('takes back a lock that lapsed while nobody took the job (still active); refuses once the job left active or another token holds it', async () => {
    const m = message();
    await mailbox.push(m);
    const fence = { ...(await locked('job-1', 'mine')), lockDurationMs: 60_000 };
    // Redis was away longer than the lock: it lapsed, the job is still in BullMQ's active list
    // and the stalled check has it as a candidate.
    await redis.del(mailbox.keys.jobLock('job-1'));
    await redis.lpush(mailbox.keys.active, 'job-0', 'job-1', 'job-2');
    await redis.sadd(mailbox.keys.stalled, 'job-1');
    expect(await mailbox.record(m.conversationId, m.messageId, fence, { reply: 'billed answer', posting: 0 })).toBe(true);
    expect(await redis.get(mailbox.keys.jobLock('job-1'))).toBe('mine');
    expect(await redis.pttl(mailbox.keys.jobLock('job-1'))).toBeGreaterThan(30_000);
    expect(await redis.sismember(mailbox.keys.stalled, 'job-1')).toBe(0);
    expect(await redis.hget(mailbox.keys.messages(m.conversationId), `${m.messageId}:reply`)).toBe('billed answer');

    // Handed back by the stalled check (out of active, no lock): refused.
    await redis.del(mailbox.keys.jobLock('job-1'));
    await redis.lrem(mailbox.keys.active, 0, 'job-1');
    expect(await mailbox.record(m.conversationId, m.messageId, fence, { posted: 1, posting: 1 })).toBe(false);
    expect(await redis.exists(mailbox.keys.jobLock('job-1'))).toBe(0);
    // Active again under another worker's lock: refused, that lock untouched.
    await redis.lpush(mailbox.keys.active, 'job-1');
    await redis.set(mailbox.keys.jobLock('job-1'), 'theirs');
    expect(await mailbox.record(m.conversationId, m.messageId, fence, { posting: 2 })).toBe(false);
    expect(await redis.get(mailbox.keys.jobLock('job-1'))).toBe('theirs');
    // A worker that gave its jobs back (shutdown timed out) never takes a lapsed lock back.
    await redis.del(mailbox.keys.jobLock('job-1'));
    expect(await mailbox.record(m.conversationId, m.messageId, { ...fence, abandoned: () => true }, { posted: 2 })).toBe(false);
    expect(await redis.exists(mailbox.keys.jobLock('job-1'))).toBe(0);
    await redis.del(mailbox.keys.active);
  });

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
