import { randomUUID } from 'node:crypto';
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { FetchAcquire, fetchAcquireLua } from '../../src/queue/fetch-acquire.js';
import { Mailbox, type AcquireResult } from '../../src/queue/mailbox.js';
import { QUEUE_NAME, type ChatJobData } from '../../src/queue/types.js';
import { deleteKeys } from '../support/redis-cleanup.js';
import { message } from './mailbox-fixture.js';
import { closeAfterEach } from '../support/close-after-each.js';
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

async function until(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the fetch that acquires', () => {
  it('hands a fetched job its conversation: the lease, the head, its call started and the lock renewed', async () => {
    const { jobId, messageId } = await queued('web:local:c1');
    const fetchAcquire = new FetchAcquire(mailbox, LOCK_MS);
    const seen: Seen[] = [];
    startWorker(fetchAcquire, seen);
    await until(() => seen.length === 1);
    const { taken } = seen[0]!;
    expect(taken).toMatchObject({ status: 'ok', head: { messageId, message: { messageId, text: expect.any(String) }, progress: { started: false, posted: 0 } } });
    // Fenced until half the renewed lock has passed, counted from before the fetch was sent.
    const head = taken!.status === 'ok' ? taken!.head! : undefined;
    expect(head!.callFencedUntil).toBeGreaterThan(seen[0]!.at);
    expect(head!.callFencedUntil).toBeLessThanOrEqual(seen[0]!.at + LOCK_MS / 2);
    expect(await redis.get(mailbox.keys.lease('web:local:c1'))).toBe(jobId);
    expect(await redis.hget(mailbox.keys.messages('web:local:c1'), `${messageId}:started`)).toBe('1');
    expect(await redis.zscore(mailbox.keys.stranded, 'web:local:c1')).toBeNull();
    expect(fetchAcquire.acquiredOnFetch).toBe(1);
    // BullMQ's own half did its work: the job completes as usual.
    await until(async () => (await queue.getJobState(jobId)) === 'completed');
    expect((await queue.getJob(jobId))!.returnvalue).toBe('done');
  });

  it('acquires for the next job too when BullMQ fetches it as the previous one completes', async () => {
    const jobs = [await queued('web:local:a'), await queued('web:local:b'), await queued('web:local:c')];
    const fetchAcquire = new FetchAcquire(mailbox, LOCK_MS);
    const seen: Seen[] = [];
    startWorker(fetchAcquire, seen, 1);
    await until(() => seen.length === 3);
    expect(seen.map((s) => s.jobId)).toEqual(jobs.map((j) => j.jobId));
    for (const [i, s] of seen.entries()) {
      expect(s.taken).toMatchObject({ status: 'ok', head: { messageId: jobs[i]!.messageId } });
    }
    expect(fetchAcquire.acquiredOnFetch).toBe(3);
    await until(async () => (await queue.getJobCounts('completed')).completed === 3);
  });

  it('says "held" for a conversation another job holds, and writes nothing', async () => {
    const { messageId } = await queued('web:local:held');
    await redis.set(mailbox.keys.lease('web:local:held'), 'another-job');
    const fetchAcquire = new FetchAcquire(mailbox, LOCK_MS);
    const seen: Seen[] = [];
    startWorker(fetchAcquire, seen);
    await until(() => seen.length === 1);
    expect(seen[0]!.taken).toEqual({ status: 'held', holder: 'another-job' });
    expect(await redis.get(mailbox.keys.lease('web:local:held'))).toBe('another-job');
    expect(await redis.hget(mailbox.keys.messages('web:local:held'), `${messageId}:started`)).toBeNull();
  });

  it('says "empty" and frees the lease when the mailbox has nothing left', async () => {
    await queued('web:local:gone');
    await redis.del(mailbox.keys.mailbox('web:local:gone'));
    const fetchAcquire = new FetchAcquire(mailbox, LOCK_MS);
    const seen: Seen[] = [];
    startWorker(fetchAcquire, seen);
    await until(() => seen.length === 1);
    expect(seen[0]!.taken).toEqual({ status: 'ok', head: undefined });
    expect(await redis.get(mailbox.keys.lease('web:local:gone'))).toBeNull();
  });

  it('gives nothing for a token that is not the fetched job\'s', async () => {
    await queued('web:local:t');
    const fetchAcquire = new FetchAcquire(mailbox, LOCK_MS);
    const seen: Seen[] = [];
    startWorker(fetchAcquire, seen, 1, { wrongTokenFirst: true });
    await until(() => seen.length === 1);
    expect(fetchAcquire.acquiredOnFetch).toBe(1);
    expect(seen[0]!.wrongToken).toBeUndefined();
    // The wrong token used the reply up: the real one falls back to the mailbox's acquire.
    expect(seen[0]!.taken).toBeUndefined();
  });

  it('only reads under at-most-once (lock duration 0): no call marked started, no fence window', async () => {
    const { messageId } = await queued('web:local:amo');
    const fetchAcquire = new FetchAcquire(mailbox, 0);
    const seen: Seen[] = [];
    startWorker(fetchAcquire, seen);
    await until(() => seen.length === 1);
    expect(seen[0]!.taken).toMatchObject({ status: 'ok', head: { messageId } });
    const head = seen[0]!.taken!.status === 'ok' ? seen[0]!.taken!.head : undefined;
    expect(head!.callFencedUntil).toBeUndefined();
    expect(await redis.hget(mailbox.keys.messages('web:local:amo'), `${messageId}:started`)).toBeNull();
  });

  it('leaves a job whose data names no conversation to BullMQ alone', async () => {
    await queue.add('other', { note: 'not a chat job' } as unknown as ChatJobData, { jobId: 'plain' });
    const fetchAcquire = new FetchAcquire(mailbox, LOCK_MS);
    const seen: Seen[] = [];
    startWorker(fetchAcquire, seen);
    await until(() => seen.length === 1);
    expect(seen[0]!.taken).toBeUndefined();
    expect(fetchAcquire.acquiredOnFetch).toBe(0);
    await until(async () => (await queue.getJobState('plain')) === 'completed');
  });

  it("runs the installed BullMQ's scripts verbatim, ours after them", () => {
    for (const command of ['moveToActive', 'moveToFinished'] as const) {
      const lua = fetchAcquireLua(command)!;
      expect(lua.startsWith('local function bullmq()\n')).toBe(true);
      expect(lua).toContain('local result = bullmq()');
    }
  });
});

describe("the bridge's worker", () => {
  const closing = closeAfterEach();

  it('acquires every conversation in the fetch: no separate acquire round trip, each message answered once', async () => {
    const pl = closing(await startPipeline({ LOG_LEVEL: 'warn' }));
    const acquire = vi.spyOn(pl.bridge.queue.mailbox, 'acquire');
    const messages = ['one', 'two', 'three', 'four', 'five'].map((text, i) => webMessage(text, { threadId: `t-fetch-${i}` }));
    for (const m of messages) await pl.bridge.ingress.handle(m);
    await pl.sink.waitFor((posts) => posts.filter((x) => x.kind === 'chunk').length === messages.length, 20_000);
    expect(pl.agent.chatCalls()).toHaveLength(messages.length);
    expect(new Set(pl.sink.posts.filter((x) => x.kind === 'chunk').map((x) => x.messageId))).toEqual(new Set(messages.map((m) => m.messageId)));
    expect(acquire).not.toHaveBeenCalled();
  });
});
