import type { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Mailbox } from '../../src/queue/mailbox.js';
import { message, unfenced, useMailbox } from './mailbox-fixture.js';

// Push, lease, order, the sweep and the uninstall drop; what the worker's steps write is in
// mailbox-progress.test.ts.
const { ctx, locked } = useMailbox('mbox');
let redis: Redis;
let mailbox: Mailbox;
beforeAll(() => ({ redis, mailbox } = ctx));

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
    expect(r.head?.progress).toEqual({ reply: undefined, posted: 0, attempts: 0, limited: 0, started: 0, posting: undefined, agentMessageId: undefined });
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
  it("forgets the workspace's waiting conversations, stranded ones included; a held one keeps only the message its job works on; other workspaces are left alone", async () => {
    const waiting = message('slack:T1:C1:1.1', 'C1');
    const held = message('slack:T1:C1:2.2', 'C1');
    const behind = [message('slack:T1:C1:2.2', 'C1'), message('slack:T1:C1:2.2', 'C1')];
    const other = message('slack:T2:C9:3.3', 'C9');
    for (const m of [waiting, held, other]) await mailbox.push(m);
    const fence = await locked('job-held');
    await mailbox.acquire(held.conversationId, fence);
    for (const m of behind) await mailbox.push(m);

    // Both are in the stranded set: every push lists its conversation there.
    expect(await mailbox.dropConversations('slack:T1:', new Map())).toBe(3);
    expect(await redis.exists(mailbox.keys.mailbox(waiting.conversationId), mailbox.keys.messages(waiting.conversationId))).toBe(0);
    expect(await redis.zscore(mailbox.keys.stranded, waiting.conversationId)).toBeNull();
    // The held conversation's job finishes the message it started; nothing behind it is left to call the agent with.
    expect(await redis.lrange(mailbox.keys.mailbox(held.conversationId), 0, -1)).toEqual([held.messageId]);
    expect(await redis.hexists(mailbox.keys.messages(held.conversationId), held.messageId)).toBe(1);
    for (const m of behind) expect(await redis.hexists(mailbox.keys.messages(held.conversationId), m.messageId)).toBe(0);
    const next = await mailbox.advance(held.conversationId, fence, { messageId: held.messageId, message: held });
    expect(next).toBeUndefined();
    // The other workspace is untouched.
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

describe('withdraw (its sender deleted the message)', () => {
  const mark = JSON.stringify({ ref: 'R1', withdrawn: true });
  const gaveUp = (m: { conversationId: string; messageId: string }) => redis.hget(mailbox.keys.messages(m.conversationId), `${m.messageId}:gaveUp`);

  it('marks a waiting message given up, so the acquire that reads it starts no call; an unknown one is absent', async () => {
    const m = message();
    await mailbox.push(m);
    expect(await mailbox.withdraw(m.conversationId, m.messageId, mark)).toBe('withdrawn');
    expect(await gaveUp(m)).toBe(mark);
    const got = await mailbox.acquire(m.conversationId, { ...(await locked('job-w1')), lockDurationMs: 30_000 }, { startCall: true });
    expect(got.status === 'ok' && got.head?.progress).toMatchObject({ gaveUp: mark, started: 0 });
    expect(await mailbox.withdraw(m.conversationId, 'nope', mark)).toBe('absent');
  });

  it('a message whose call started is marked too (not called again after a crash); an answered one is left alone', async () => {
    const started = message();
    await mailbox.push(started);
    const fence = { ...(await locked('job-w2')), lockDurationMs: 30_000 };
    await mailbox.acquire(started.conversationId, fence, { startCall: true });
    expect(await redis.hget(mailbox.keys.messages(started.conversationId), `${started.messageId}:started`)).toBe('1');
    expect(await mailbox.withdraw(started.conversationId, started.messageId, mark)).toBe('withdrawn_during_call');
    expect(await gaveUp(started)).toBe(mark);

    const answered = message();
    await mailbox.push(answered);
    const fence2 = await locked('job-w3');
    await mailbox.acquire(answered.conversationId, fence2, { startCall: true });
    await mailbox.record(answered.conversationId, answered.messageId, fence2, { reply: 'hi', posting: 0 });
    expect(await mailbox.withdraw(answered.conversationId, answered.messageId, mark)).toBe('answered');
    expect(await gaveUp(answered)).toBeNull();
  });
});
