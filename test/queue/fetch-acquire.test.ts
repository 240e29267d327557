import { randomUUID } from 'node:crypto';
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { FetchAcquire, fetchAcquireLua } from '../../src/queue/fetch-acquire.js';
import { Mailbox, type AcquireResult } from '../../src/queue/mailbox.js';
import { QUEUE_NAME, type ChatJobData } from '../../src/queue/types.js';
import { deleteKeys } from '../support/redis-cleanup.js';
import { until } from '../support/until.js';
import { message } from './mailbox-fixture.js';
import { closeAfterEach } from '../support/close-after-each.js';
import { encodeConversationId } from '../../src/core/conversation.js';
import { startPipeline, webMessage } from '../support/pipeline.js';

/**
 * BullMQ's fetch that also acquires the fetched job's conversation (src/queue/fetch-acquire.ts),
 * with a real BullMQ Queue and Worker on the real Redis: what the processor is handed is what
 * the mailbox's acquire would have said, BullMQ's own half still works (completion, the next
 * job fetched on completion), and nothing is handed to the wrong lock token.
 */

const LOCK_MS = 30_000;
let bullPrefix: string;
let redis: Redis;
let mailbox: Mailbox;
let queue: Queue<ChatJobData>;
const workers: Worker[] = [];

beforeAll(() => {
  redis = new Redis('redis://127.0.0.1:6379');
});
beforeEach(() => {
  bullPrefix = `test-fetch-acquire-${randomUUID().slice(0, 8)}`;
  mailbox = new Mailbox({ redis, prefix: `${bullPrefix}:${QUEUE_NAME}` });
  queue = new Queue<ChatJobData>(QUEUE_NAME, { connection: redis.duplicate(), prefix: bullPrefix });
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.close()));
  await queue.close();
  await deleteKeys(bullPrefix);
});
afterAll(() => redis.disconnect());

/** Pushes a message, reserving its conversation for a job with the message's ID, and queues that job. */
async function queued(conversationId: string): Promise<{ jobId: string; messageId: string }> {
  const m = message(conversationId);
  const jobId = `job-${m.messageId}`;
  await mailbox.push(m, 0, jobId);
  await queue.add('wake-conversation', { platform: 'web', conversationId, messageId: m.messageId, instanceId: m.instanceId }, { jobId });
  return { jobId, messageId: m.messageId };
}

interface Seen {
  jobId: string;
  taken: AcquireResult | undefined;
  /** With `wrongTokenFirst`: what take() gave for a token that is not the job's, asked first. */
  wrongToken: AcquireResult | undefined;
  at: number;
}

/** Runs a worker with the fetch that acquires; each job records what it was handed. */
function startWorker(fetchAcquire: FetchAcquire, seen: Seen[], concurrency = 1, { wrongTokenFirst = false } = {}) {
  const worker = new Worker<ChatJobData>(
    QUEUE_NAME,
    async (job: Job<ChatJobData>, token?: string) => {
      const wrongToken = wrongTokenFirst ? fetchAcquire.take(job.id!, 'not-the-token') : undefined;
      seen.push({ jobId: job.id!, wrongToken, taken: fetchAcquire.take(job.id!, token), at: performance.now() });
      return 'done';
    },
    { connection: redis.duplicate({ maxRetriesPerRequest: null }), prefix: bullPrefix, concurrency, lockDuration: LOCK_MS },
    fetchAcquire.backendFactory,
  );
  workers.push(worker);
  return worker;
}

describe('the fetch that acquires', () => {
  it('hands a fetched job its conversation: the lease, the head, its call started and the lock renewed', async () => {
    const { jobId, messageId } = await queued('web:local:c1');
    const fetchAcquire = new FetchAcquire({ mailbox, lockMs: LOCK_MS });
    const seen: Seen[] = [];
    startWorker(fetchAcquire, seen);
    await until(() => seen.length === 1, '1 job(s) processed');
    const { taken } = seen[0]!;
    expect(taken).toMatchObject({ status: 'ok', head: { messageId, message: { messageId, text: expect.any(String) }, progress: { started: 0, posted: 0 } } });
    // Fenced until half the renewed lock has passed, counted from before the fetch was sent.
    const head = taken!.status === 'ok' ? taken!.head! : undefined;
    expect(head!.callFencedUntil).toBeGreaterThan(seen[0]!.at);
    expect(head!.callFencedUntil).toBeLessThanOrEqual(seen[0]!.at + LOCK_MS / 2);
    expect(await redis.get(mailbox.keys.lease('web:local:c1'))).toBe(jobId);
    expect(await redis.hget(mailbox.keys.messages('web:local:c1'), `${messageId}:started`)).toBe('1');
    expect(await redis.zscore(mailbox.keys.stranded, 'web:local:c1')).toBeNull();
    expect(fetchAcquire.counts.acquiredOnFetch).toBe(1);
    // BullMQ's own half did its work: the job completes as usual.
    await until(async () => (await queue.getJobState(jobId)) === 'completed', 'the job completed');
    expect((await queue.getJob(jobId))!.returnvalue).toBe('done');
  });

  it('does not mark a head whose earlier call died with its worker: the worker marks it right before calling again', async () => {
    const { messageId } = await queued('web:local:again');
    await redis.hset(mailbox.keys.messages('web:local:again'), `${messageId}:started`, '1');
    const fetchAcquire = new FetchAcquire({ mailbox, lockMs: LOCK_MS });
    const seen: Seen[] = [];
    startWorker(fetchAcquire, seen);
    await until(() => seen.length === 1, '1 job(s) processed');
    expect(seen[0]!.taken).toMatchObject({ status: 'ok', head: { messageId, progress: { started: 1 }, callFencedUntil: undefined } });
    expect(await redis.hget(mailbox.keys.messages('web:local:again'), `${messageId}:started`)).toBe('1');
  });

  it('acquires for the next job too when BullMQ fetches it as the previous one completes', async () => {
    const jobs = [await queued('web:local:a'), await queued('web:local:b'), await queued('web:local:c')];
    const fetchAcquire = new FetchAcquire({ mailbox, lockMs: LOCK_MS });
    const seen: Seen[] = [];
    startWorker(fetchAcquire, seen, 1);
    await until(() => seen.length === 3, '3 job(s) processed');
    expect(seen.map((s) => s.jobId)).toEqual(jobs.map((j) => j.jobId));
    for (const [i, s] of seen.entries()) {
      expect(s.taken).toMatchObject({ status: 'ok', head: { messageId: jobs[i]!.messageId } });
    }
    expect(fetchAcquire.counts.acquiredOnFetch).toBe(3);
    await until(async () => (await queue.getJobCounts('completed')).completed === 3, 'three jobs completed');
  });

  it('says "held" for a conversation another job holds, and writes nothing', async () => {
    const { messageId } = await queued('web:local:held');
    await redis.set(mailbox.keys.lease('web:local:held'), 'another-job');
    const fetchAcquire = new FetchAcquire({ mailbox, lockMs: LOCK_MS });
    const seen: Seen[] = [];
    startWorker(fetchAcquire, seen);
    await until(() => seen.length === 1, '1 job(s) processed');
    expect(seen[0]!.taken).toEqual({ status: 'held', holder: 'another-job' });
    expect(await redis.get(mailbox.keys.lease('web:local:held'))).toBe('another-job');
    expect(await redis.hget(mailbox.keys.messages('web:local:held'), `${messageId}:started`)).toBeNull();
  });

  it('says "empty" and frees the lease when the mailbox has nothing left', async () => {
    await queued('web:local:gone');
    await redis.del(mailbox.keys.mailbox('web:local:gone'));
    const fetchAcquire = new FetchAcquire({ mailbox, lockMs: LOCK_MS });
    const seen: Seen[] = [];
    startWorker(fetchAcquire, seen);
    await until(() => seen.length === 1, '1 job(s) processed');
    expect(seen[0]!.taken).toEqual({ status: 'ok', head: undefined });
    expect(await redis.get(mailbox.keys.lease('web:local:gone'))).toBeNull();
  });

  it('gives nothing for a token that is not the fetched job\'s', async () => {
    await queued('web:local:t');
    const fetchAcquire = new FetchAcquire({ mailbox, lockMs: LOCK_MS });
    const seen: Seen[] = [];
    startWorker(fetchAcquire, seen, 1, { wrongTokenFirst: true });
    await until(() => seen.length === 1, '1 job(s) processed');
    expect(fetchAcquire.counts.acquiredOnFetch).toBe(1);
    expect(seen[0]!.wrongToken).toBeUndefined();
    // The wrong token used the reply up: the real one falls back to the mailbox's acquire.
    expect(seen[0]!.taken).toBeUndefined();
  });

  it('only reads under at-most-once (lock duration 0): no call marked started, no fence window', async () => {
    const { messageId } = await queued('web:local:amo');
    const fetchAcquire = new FetchAcquire({ mailbox, lockMs: 0 });
    const seen: Seen[] = [];
    startWorker(fetchAcquire, seen);
    await until(() => seen.length === 1, '1 job(s) processed');
    expect(seen[0]!.taken).toMatchObject({ status: 'ok', head: { messageId } });
    const head = seen[0]!.taken!.status === 'ok' ? seen[0]!.taken!.head : undefined;
    expect(head!.callFencedUntil).toBeUndefined();
    expect(await redis.hget(mailbox.keys.messages('web:local:amo'), `${messageId}:started`)).toBeNull();
  });

  it('leaves a job whose data names no conversation to BullMQ alone', async () => {
    await queue.add('other', { note: 'not a chat job' } as unknown as ChatJobData, { jobId: 'plain' });
    const fetchAcquire = new FetchAcquire({ mailbox, lockMs: LOCK_MS });
    const seen: Seen[] = [];
    startWorker(fetchAcquire, seen);
    await until(() => seen.length === 1, '1 job(s) processed');
    expect(seen[0]!.taken).toBeUndefined();
    expect(fetchAcquire.counts.acquiredOnFetch).toBe(0);
    await until(async () => (await queue.getJobState('plain')) === 'completed', 'the job completed');
  });

  it("runs the installed BullMQ's scripts verbatim, ours after them", () => {
    for (const command of ['moveToActive', 'moveToFinished'] as const) {
      const lua = fetchAcquireLua(command)!;
      expect(lua.startsWith('local function bullmq(KEYS, ARGV)\n')).toBe(true);
      expect(lua).toContain('local result = bullmq(KEYS, ARGV)');
    }
  });
});

describe('the finish that advances', () => {
  /** A worker whose jobs answer their head (here: nothing), run `during`, and ask their completion to finish it. */
  function startFinishing(fetchAcquire: FetchAcquire, during: (job: Job<ChatJobData>, head: string) => Promise<void> = async () => {}) {
    const worker = new Worker<ChatJobData>(
      QUEUE_NAME,
      async (job: Job<ChatJobData>, token?: string) => {
        const taken = fetchAcquire.take(job.id!, token);
        const head = taken?.status === 'ok' ? taken.head : undefined;
        if (!head?.message) return 'nothing';
        await during(job, head.messageId);
        fetchAcquire.finishWith(job.id!, {
          conversationId: job.data.conversationId,
          messageId: head.messageId,
          pendingKey: mailbox.keys.channelPending(head.message.platform, head.message.channelId),
          data: job.data,
        });
        return 'answered';
      },
      { connection: redis.duplicate({ maxRetriesPerRequest: null }), prefix: bullPrefix, lockDuration: LOCK_MS },
      fetchAcquire.backendFactory,
    );
    worker.on('error', () => {});
    workers.push(worker);
    return worker;
  }

  it("finishes the job's head with its completion: popped, record gone, lease released", async () => {
    const { jobId, messageId } = await queued('web:local:f1');
    const fetchAcquire = new FetchAcquire({ mailbox, lockMs: LOCK_MS });
    startFinishing(fetchAcquire);
    await until(async () => (await queue.getJobState(jobId)) === 'completed', 'the job completed');
    expect((await queue.getJob(jobId))!.returnvalue).toBe('answered');
    expect(await redis.llen(mailbox.keys.mailbox('web:local:f1'))).toBe(0);
    expect(await redis.hget(mailbox.keys.messages('web:local:f1'), messageId)).toBeNull();
    expect(await redis.get(mailbox.keys.lease('web:local:f1'))).toBeNull();
    expect(await redis.zcard(mailbox.keys.channelPending('web', 'c1'))).toBe(0);
    expect(fetchAcquire.counts).toMatchObject({ advancedOnFinish: 1, handedOff: 0 });
  });

  it('hands a message that arrived meanwhile to a new job, which holds the lease; the conversation is listed for the sweep until it runs', async () => {
    const { jobId, messageId } = await queued('web:local:f2');
    const later = message('web:local:f2');
    const handed: Array<{ head: string; jobId: string; from: string; backlog: number }> = [];
    const fetchAcquire = new FetchAcquire({
      mailbox,
      lockMs: LOCK_MS,
      handOff: async (finish, head, next, backlog) => {
        handed.push({ head, jobId: next, from: finish.data.messageId, backlog });
      },
    });
    startFinishing(fetchAcquire, async () => {
      // Held by this job: the push queues no job of its own.
      expect(await mailbox.push(later, 0, `job-${later.messageId}`)).toMatchObject({ status: 'queued', held: true });
    });
    await until(async () => (await queue.getJobState(jobId)) === 'completed', 'the job completed');
    // The channel's backlog is the message handed on: the new job goes in line as a plain one.
    expect(handed).toEqual([{ head: later.messageId, jobId: expect.stringMatching(new RegExp(`^${jobId}-h-`)), from: messageId, backlog: 1 }]);
    expect(await redis.lrange(mailbox.keys.mailbox('web:local:f2'), 0, -1)).toEqual([later.messageId]);
    expect(await redis.hget(mailbox.keys.messages('web:local:f2'), messageId)).toBeNull();
    expect(await redis.get(mailbox.keys.lease('web:local:f2'))).toBe(handed[0]!.jobId);
    expect(await redis.zscore(mailbox.keys.stranded, 'web:local:f2')).not.toBeNull();
    expect(fetchAcquire.counts).toMatchObject({ advancedOnFinish: 1, handedOff: 1 });
    // The hand-off callback queued nothing here (as if the worker died before the add): the
    // stranded sweep sees the conversation, held by a job it will find does not exist, and wakes it.
    expect(await mailbox.stranded(0, 10)).toEqual([expect.objectContaining({ conversationId: 'web:local:f2', holder: handed[0]!.jobId, messageId: later.messageId })]);
    expect(await queue.getJobState(handed[0]!.jobId)).toBe('unknown');
  });

  it("tells the hand-off the channel's backlog: the follow-up and another conversation's message of the same channel make 2", async () => {
    const { jobId } = await queued('web:local:f5');
    const backlogs: number[] = [];
    const fetchAcquire = new FetchAcquire({ mailbox, lockMs: LOCK_MS, handOff: async (_finish, _head, _next, backlog) => void backlogs.push(backlog) });
    startFinishing(fetchAcquire, async () => {
      await mailbox.push(message('web:local:f5'), 0, 'job-f5-later');
      await mailbox.push(message('web:local:f5-other'), 0, 'job-f5-other');
    });
    await until(async () => (await queue.getJobState(jobId)) === 'completed', 'the job completed');
    expect(backlogs).toEqual([2]);
  });

  it('finishes nothing for a job whose lock is no longer its own', async () => {
    const { jobId, messageId } = await queued('web:local:f3');
    const fetchAcquire = new FetchAcquire({ mailbox, lockMs: LOCK_MS });
    let lockTaken = false;
    const worker = startFinishing(fetchAcquire, async (job) => {
      // Another worker took the job meanwhile (this one was paused past its lock).
      await redis.set(mailbox.keys.jobLock(job.id!), 'another-token');
      lockTaken = true;
    });
    const failed = new Promise((resolve) => worker.on('error', resolve));
    await until(() => lockTaken, 'the lock taken by another worker');
    await failed;
    expect(await redis.lrange(mailbox.keys.mailbox('web:local:f3'), 0, -1)).toEqual([messageId]);
    expect(await redis.hget(mailbox.keys.messages('web:local:f3'), messageId)).not.toBeNull();
    expect(await redis.get(mailbox.keys.lease('web:local:f3'))).toBe(jobId);
    expect(fetchAcquire.counts.advancedOnFinish).toBe(0);
  });
});

describe("the bridge's worker", () => {
  const closing = closeAfterEach();

  it('acquires and finishes every lone message in BullMQ\'s own round trips: no separate acquire or advance, each answered once', async () => {
    const pl = closing(await startPipeline({ LOG_LEVEL: 'warn' }));
    const acquire = vi.spyOn(pl.bridge.queue.mailbox, 'acquire');
    const advance = vi.spyOn(pl.bridge.queue.mailbox, 'advance');
    const messages = ['one', 'two', 'three', 'four', 'five'].map((text, i) => webMessage(text, { threadId: `t-fetch-${i}` }));
    for (const m of messages) await pl.bridge.ingress.handle(m);
    await pl.sink.waitFor((posts) => posts.filter((x) => x.kind === 'chunk').length === messages.length, 20_000);
    expect(pl.agent.chatCalls()).toHaveLength(messages.length);
    expect(new Set(pl.sink.posts.filter((x) => x.kind === 'chunk').map((x) => x.messageId))).toEqual(new Set(messages.map((m) => m.messageId)));
    expect(acquire).not.toHaveBeenCalled();
    expect(advance).not.toHaveBeenCalled();
    // Nothing left behind: every mailbox finished, every lease released.
    for (const m of messages) {
      await until(async () => (await pl.bridge.redis.exists(pl.bridge.queue.mailbox.keys.lease(encodeConversationId(m.conversation)))) === 0, 'the lease released');
      expect(await pl.bridge.redis.llen(pl.bridge.queue.mailbox.keys.mailbox(encodeConversationId(m.conversation)))).toBe(0);
    }
  });

  it('answers a message that arrived during the answer before it, in order and once, through a hand-off job', async () => {
    const pl = closing(await startPipeline({ LOG_LEVEL: 'warn' }));
    // Answered within a turn (250 ms), so its job's completion finishes it; the second arrives meanwhile.
    pl.agent.setDelay(100, { endpoint: 'chat' });
    const first = webMessage('first', { threadId: 't-handoff' });
    await pl.bridge.ingress.handle(first);
    await pl.agent.waitForCalls(1, (c) => c.endpoint === 'chat');
    const lease = pl.bridge.queue.mailbox.keys.lease(encodeConversationId(first.conversation));
    expect(await pl.bridge.redis.exists(lease)).toBe(1);
    const second = webMessage('second', { threadId: 't-handoff' });
    expect(await pl.bridge.ingress.handle(second)).toMatchObject({ status: 'queued' });
    await pl.sink.waitFor((posts) => posts.filter((x) => x.kind === 'chunk').length === 2, 20_000);
    expect(pl.sink.posts.filter((x) => x.kind === 'chunk').map((x) => x.messageId)).toEqual([first.messageId, second.messageId]);
    expect(pl.agent.chatCalls()).toHaveLength(2);
    // The second message's job was the hand-off, not one the ingress queued.
    const jobs = await pl.bridge.queue.queue.getJobs(['completed', 'active', 'waiting', 'prioritized']);
    expect(jobs.some((j) => /-h-/.test(j.id ?? ''))).toBe(true);
    await until(async () => (await pl.bridge.redis.exists(lease)) === 0, 'the lease released');
    expect(await pl.bridge.redis.zscore(pl.bridge.queue.mailbox.keys.stranded, encodeConversationId(first.conversation))).toBeNull();
  });
});
