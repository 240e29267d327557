import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAgentApi } from '../../src/agent-api/client.js';
import type { ChunkInfo, ReplyPort } from '../../src/core/reply-port.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import type { Fence, MailboxHead } from '../../src/queue/mailbox.js';
import { jobIdFor } from '../../src/queue/types.js';
import { FailureLog } from '../../src/diagnostics/failure-log.js';
import { MessageProcessor, type ReadyHead } from '../../src/worker/process-message.js';
import { startPipeline, webMessage, type Pipeline } from '../support/pipeline.js';
import { sinkPort } from '../support/sink.js';

/**
 * The worker's steps driven by hand against the real Redis, agent emulator and sink: ingress
 * queues the messages (no worker runs in this process), and the test plays two workers whose
 * BullMQ lock on the job is forged, to take a job over at an exact moment.
 */
let p: Pipeline | undefined;
afterEach(async () => {
  await p?.close();
  p = undefined;
});

type Posted = { index: number; text: string; info?: ChunkInfo };

async function setup(options: { callGuarantee?: 'at-least-once' | 'at-most-once'; maxChars?: number; maxReplyChunks?: number } = {}) {
  p = await startPipeline({ ROLE: 'ingress' });
  const pl = p;
  const mailbox = pl.bridge.queue.mailbox;
  const sink = sinkPort(pl.sink.url, options.maxChars ?? 2000);
  const posted: Posted[] = [];
  /** Runs just after each chunk reached the sink, before the worker records anything else. */
  let afterPost: (index: number) => Promise<void> = async () => {};
  const port: ReplyPort = {
    ...sink,
    postChunk: async (target, chunk, index, info) => {
      await sink.postChunk(target, chunk, index, info);
      posted.push({ index, text: chunk, info });
      await afterPost(index);
    },
  };
  const failures = new FailureLog(pl.bridge.redis, `${pl.prefix}:chat`);
  const processor = new MessageProcessor({
    agent: createAgentApi(pl.agent.agentConfig()),
    ports: { web: port },
    mailbox,
    logger: createLogger({ level: 'silent', registry: new SecretRegistry() }),
    metrics: pl.bridge.metrics,
    retry: { attempts: 3, baseDelayMs: 20 },
    failures,
    threadContext: { maxMessages: 5, maxChars: 1000 },
    callGuarantee: options.callGuarantee,
    maxReplyChunks: options.maxReplyChunks,
  });
  /** Gives the job's BullMQ lock to `token`, as BullMQ does when another worker takes the job. */
  const lockFor = async (jobId: string, token: string): Promise<Fence> => {
    await pl.bridge.redis.set(mailbox.keys.jobLock(jobId), token, 'PX', 60_000);
    return { jobId, token };
  };
  const ready = (head: MailboxHead | undefined | 'lost' | 'held'): ReadyHead => {
    if (typeof head === 'string') throw new Error(`no head: ${head}`);
    if (!head?.message) throw new Error('no head');
    return { ...head, message: head.message };
  };
  const acquire = async (conversationId: string, fence: Fence) => {
    const r = await mailbox.acquire(conversationId, fence);
    return r.status === 'ok' ? r.head : r.status;
  };
  return {
    pl,
    mailbox,
    processor,
    posted,
    failures,
    lockFor,
    ready,
    acquire,
    setAfterPost: (fn: typeof afterPost) => (afterPost = fn),
  };
}

const conversationOf = (channelId: string) => `web:local:${channelId}`;

describe('a worker that lost its job lock', () => {
  it('is refused before anything visible: no agent call, no post, the lease untouched', async () => {
    const t = await setup();
    const m = webMessage('never asked', { channelId: 'c1' });
    await t.pl.bridge.ingress.handle(m);
    const jobId = jobIdFor('web', m.messageId);
    await t.lockFor(jobId, 'the-new-owner');
    const stale: Fence = { jobId, token: 'the-old-owner' };
    expect(await t.mailbox.acquire(conversationOf('c1'), stale)).toEqual({ status: 'lost' });

    // Even holding a head from before, its steps are refused by Redis.
    const owner = await t.lockFor(jobId, 'owner');
    const head = t.ready(await t.acquire(conversationOf('c1'), owner));
    await t.lockFor(jobId, 'the-new-owner');
    expect(await t.processor.process(head, owner)).toEqual({ outcome: 'lost' });
    expect(await t.mailbox.advance(conversationOf('c1'), owner, head)).toBe('lost');
    expect(t.pl.agent.chatCalls()).toHaveLength(0);
    expect(t.posted).toHaveLength(0);
  });

  it('taken over during the agent call: the old worker records and posts nothing and never takes the next message; each reply is posted once', async () => {
    const t = await setup();
    const [m1, m2] = [webMessage('first', { channelId: 'c1' }), webMessage('second', { channelId: 'c1' })];
    for (const m of [m1, m2]) await t.pl.bridge.ingress.handle(m);
    const jobId = jobIdFor('web', m1.messageId);
    const conversation = conversationOf('c1');

    const a = await t.lockFor(jobId, 'worker-a');
    const headA = t.ready(await t.acquire(conversation, a));
    t.pl.agent.hangNext(1, { endpoint: 'chat' });
    const running = t.processor.process(headA, a);
    await t.pl.agent.waitForCalls(1, (c) => c.endpoint === 'chat');
    // Worker A is paused past its lock; BullMQ gives the job to worker B.
    const b = await t.lockFor(jobId, 'worker-b');
    t.pl.agent.releaseHanging();
    expect(await running).toEqual({ outcome: 'lost' });
    expect(await t.mailbox.advance(conversation, a, headA)).toBe('lost');
    expect(t.posted).toHaveLength(0);

    // Worker B resumes: the call A started had no recorded answer, so (at-least-once) it asks again.
    let head = await t.acquire(conversation, b);
    while (head && head !== 'lost' && typeof head !== 'string') {
      expect(await t.processor.process(t.ready(head), b)).toEqual({ outcome: 'replied' });
      head = await t.mailbox.advance(conversation, b, head);
    }
    expect(head).toBeUndefined();
    const calls = t.pl.agent.chatCalls().map((c) => c.message);
    expect(calls.filter((x) => x === 'second')).toHaveLength(1);
    expect(calls.filter((x) => x === 'first')).toHaveLength(2);
    expect(t.posted.map((x) => x.text.includes('first') ? 'first' : x.text.includes('second') ? 'second' : x.text)).toEqual(['first', 'second']);
  });

  it('taken over between two chunks: the new owner posts the rest, looking first for the chunk that may be out', async () => {
    const t = await setup({ maxChars: 300 });
    const long = Array.from({ length: 3 }, (_, i) => `Paragraph ${i} ${'lorem ipsum '.repeat(20)}`).join('\n\n');
    const m = webMessage(long, { channelId: 'c1' });
    await t.pl.bridge.ingress.handle(m);
    const jobId = jobIdFor('web', m.messageId);
    const conversation = conversationOf('c1');
    const a = await t.lockFor(jobId, 'worker-a');
    // Chunk 1 reaches the platform, then worker A freezes (SIGSTOP) before recording it, and
    // BullMQ gives the job to worker B.
    let thaw: () => void = () => {};
    const frozen = new Promise<void>((resolve) => (thaw = resolve));
    let takenOver: () => void = () => {};
    const tookOver = new Promise<void>((resolve) => (takenOver = resolve));
    t.setAfterPost(async (index) => {
      if (index === 1) {
        await t.lockFor(jobId, 'worker-b');
        takenOver();
        await frozen;
      }
    });
    const runningA = t.processor.process(t.ready(await t.acquire(conversation, a)), a);
    await tookOver;
    expect(t.posted.map((x) => x.index)).toEqual([0, 1]);
    t.setAfterPost(async () => {});

    const b: Fence = { jobId, token: 'worker-b' };
    const head = t.ready(await t.acquire(conversation, b));
    expect(head.progress).toMatchObject({ posted: 1, posting: 1 });
    expect(await t.processor.process(head, b)).toEqual({ outcome: 'replied' });
    expect(await t.mailbox.advance(conversation, b, head)).toBeUndefined();
    // A wakes: the message is finished, so it records nothing and posts nothing more.
    thaw();
    expect(await runningA).toEqual({ outcome: 'lost' });
    expect(t.pl.agent.chatCalls()).toHaveLength(1);
    const total = t.posted[0]!.info!.total;
    expect(total).toBeGreaterThanOrEqual(3);
    const rest = Array.from({ length: total - 2 }, (_, i) => [i + 2, false, total, m.messageId]);
    expect(t.posted.map((x) => [x.index, x.info?.mayExist, x.info?.total, x.info?.messageId])).toEqual([
      [0, false, total, m.messageId],
      [1, false, total, m.messageId],
      // The retry of chunk 1 says it may already be there (the port looks before posting).
      [1, true, total, m.messageId],
      ...rest,
    ]);
    // The agent's reply ID, recorded with the reply, reaches every post (feedback buttons use it).
    const ids = new Set(t.posted.map((x) => x.info?.agentMessageId));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/.+/);
  });
});

describe('MAX_REPLY_CHUNKS', () => {
  it('cuts a longer reply to that many posts, the last one saying the answer was cut', async () => {
    const t = await setup({ maxChars: 300, maxReplyChunks: 3 });
    const long = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} ${'lorem ipsum '.repeat(20)}`).join('\n\n');
    const m = webMessage(long, { channelId: 'c1' });
    await t.pl.bridge.ingress.handle(m);
    const fence = await t.lockFor(jobIdFor('web', m.messageId), 'w');
    expect(await t.processor.process(t.ready(await t.acquire(conversationOf('c1'), fence)), fence)).toEqual({ outcome: 'replied' });
    expect(t.posted.map((x) => [x.index, x.info?.total])).toEqual([
      [0, 3],
      [1, 3],
      [2, 3],
    ]);
    expect(t.posted[0]!.text).toContain('Paragraph 0');
    expect(t.posted[2]!.text).toMatch(/answer was cut.*longer than 3 messages/);
  });
});

describe('a read that started the call (startCall)', () => {
  const withLock = (fence: Fence, lockDurationMs: number): Fence => ({ ...fence, lockDurationMs });
  const readHead = async (t: Awaited<ReturnType<typeof setup>>, fence: Fence) => {
    const r = await t.mailbox.acquire(conversationOf('c1'), fence, { startCall: t.processor.startsCallOnRead });
    return t.ready(r.status === 'ok' ? r.head : r.status);
  };

  it('within the renewed lock the agent is called with no write of its own: one fenced write per message fewer', async () => {
    const t = await setup();
    const [m1, m2] = [webMessage('first', { channelId: 'c1' }), webMessage('second', { channelId: 'c1' })];
    for (const m of [m1, m2]) await t.pl.bridge.ingress.handle(m);
    const fence = withLock(await t.lockFor(jobIdFor('web', m1.messageId), 'w'), 30_000);
    const records = vi.spyOn(t.mailbox, 'record');

    const head = await readHead(t, fence);
    expect(head.callFencedUntil).toBeGreaterThan(performance.now());
    expect(await t.processor.process(head, fence)).toEqual({ outcome: 'replied' });
    // Only the answer (with "posting chunk 0") is written: the read was the "call started" mark.
    expect(records.mock.calls.map((c) => c[3])).toEqual([expect.objectContaining({ reply: expect.any(String), posting: 0 })]);

    // A head read without startCall is fenced again right before its call.
    const next = await t.mailbox.advance(conversationOf('c1'), fence, head);
    expect(await t.processor.process(t.ready(next), fence)).toEqual({ outcome: 'replied' });
    expect(records.mock.calls.slice(1).map((c) => c[3])).toEqual([{ started: 1 }, expect.objectContaining({ posting: 0 })]);
    expect(t.pl.agent.chatCalls().map((c) => c.message)).toEqual(['first', 'second']);
  });

  it('once the renewed lock may have lapsed, the worker checks again: a lost lock refuses the call', async () => {
    const t = await setup();
    const m = webMessage('too late', { channelId: 'c1' });
    await t.pl.bridge.ingress.handle(m);
    const jobId = jobIdFor('web', m.messageId);
    const fence = withLock(await t.lockFor(jobId, 'old-owner'), 200);
    const head = await readHead(t, fence);
    expect(head.callFencedUntil).toBeDefined();
    // Paused past half the renewed lock; the job is another worker's by now.
    await new Promise((r) => setTimeout(r, Math.max(0, head.callFencedUntil! - performance.now()) + 20));
    await t.lockFor(jobId, 'new-owner');
    expect(await t.processor.process(head, fence)).toEqual({ outcome: 'lost' });
    expect(t.pl.agent.chatCalls()).toHaveLength(0);
    expect(t.posted).toHaveLength(0);
  });

  it('is not used under at-most-once, where "started" means "never call again"', async () => {
    const t = await setup({ callGuarantee: 'at-most-once' });
    expect(t.processor.startsCallOnRead).toBe(false);
    const m = webMessage('careful', { channelId: 'c1' });
    await t.pl.bridge.ingress.handle(m);
    const fence = withLock(await t.lockFor(jobIdFor('web', m.messageId), 'w'), 30_000);
    const head = await readHead(t, fence);
    expect(head.callFencedUntil).toBeUndefined();
    expect(head.progress.started).toBe(0);
    expect(await t.pl.bridge.redis.hget(t.mailbox.keys.messages(conversationOf('c1')), `${m.messageId}:started`)).toBeNull();
  });
});

describe('AGENT_CALL_GUARANTEE=at-most-once', () => {
  it('a message whose call started and never recorded an answer is not called again: the user is told, with a reference, and it is logged as a failure', async () => {
    const t = await setup({ callGuarantee: 'at-most-once' });
    const [m1, m2] = [webMessage('lost in flight', { channelId: 'c1' }), webMessage('asked after', { channelId: 'c1' })];
    for (const m of [m1, m2]) await t.pl.bridge.ingress.handle(m);
    const jobId = jobIdFor('web', m1.messageId);
    const conversation = conversationOf('c1');
    const a = await t.lockFor(jobId, 'worker-a');
    t.pl.agent.hangNext(1, { endpoint: 'chat' });
    const running = t.processor.process(t.ready(await t.acquire(conversation, a)), a);
    await t.pl.agent.waitForCalls(1, (c) => c.endpoint === 'chat');
    const b = await t.lockFor(jobId, 'worker-b');
    t.pl.agent.releaseHanging();
    expect(await running).toEqual({ outcome: 'lost' });

    const head = t.ready(await t.acquire(conversation, b));
    expect(head.progress.started).toBe(1);
    expect(await t.processor.process(head, b)).toEqual({ outcome: 'gave_up' });
    const next = await t.mailbox.advance(conversation, b, head);
    expect(await t.processor.process(t.ready(next), b)).toEqual({ outcome: 'replied' });

    expect(t.pl.agent.chatCalls().map((c) => c.message)).toEqual(['lost in flight', 'asked after']);
    const notice = t.pl.sink.posts.find((x) => x.kind === 'notice' && x.messageId === m1.messageId);
    expect(notice?.text).toMatch(/^The answer was lost when the bridge restarted; please ask again\. \(ref [A-Z2-9]{6}\)$/);
    const ref = /ref ([A-Z2-9]{6})/.exec(notice!.text)![1];
    expect((await t.failures.recent(5)).map((f) => f.ref)).toContain(ref);
    expect(t.pl.sink.posts.filter((x) => x.kind === 'chunk').map((x) => x.messageId)).toEqual([m2.messageId]);
  });

  it('a call that failed (and is retried) is called again: only a crash during the call counts as lost', async () => {
    const t = await setup({ callGuarantee: 'at-most-once' });
    const m = webMessage('retry me', { channelId: 'c1' });
    await t.pl.bridge.ingress.handle(m);
    const fence = await t.lockFor(jobIdFor('web', m.messageId), 'w');
    t.pl.agent.failNext(1, { status: 503 }, { endpoint: 'chat' });
    const first = await t.processor.process(t.ready(await t.acquire(conversationOf('c1'), fence)), fence);
    expect(first.outcome).toBe('retry');
    const head = t.ready(await t.acquire(conversationOf('c1'), fence));
    expect(head.progress).toMatchObject({ started: 0, attempts: 1 });
    expect(await t.processor.process(head, fence)).toEqual({ outcome: 'replied' });
    expect(t.pl.agent.chatCalls()).toHaveLength(2);
  });
});

describe('AGENT_CALL_GUARANTEE=at-least-once: at most two calls lost to crashes', () => {
  it('a call answered with an error takes back only its own start: crash, 503, crash, and the next read gives up with the notice (3 calls)', async () => {
    const t = await setup();
    const m = webMessage('unlucky', { channelId: 'c1' });
    await t.pl.bridge.ingress.handle(m);
    const jobId = jobIdFor('web', m.messageId);
    /** A worker with a fresh lock reads the head as chat-worker does (the read starts the call). */
    const read = async (token: string) => {
      const fence: Fence = { ...(await t.lockFor(jobId, token)), lockDurationMs: 30_000 };
      const r = await t.mailbox.acquire(conversationOf('c1'), fence, { startCall: t.processor.startsCallOnRead });
      return { fence, head: t.ready(r.status === 'ok' ? r.head : r.status) };
    };
    /** The worker dies during the call: its answer is never recorded (another worker holds the job). */
    const crashDuringCall = async (token: string, calls: number) => {
      const { fence, head } = await read(token);
      t.pl.agent.hangNext(1, { endpoint: 'chat' });
      const running = t.processor.process(head, fence);
      await t.pl.agent.waitForCalls(calls, (c) => c.endpoint === 'chat');
      await t.lockFor(jobId, `${token}-taken-over`);
      t.pl.agent.releaseHanging();
      expect(await running).toEqual({ outcome: 'lost' });
      return head.progress.started;
    };

    expect(await crashDuringCall('a', 1)).toBe(0);
    const b = await read('b');
    expect(b.head.progress.started).toBe(1);
    t.pl.agent.failNext(1, { status: 503 }, { endpoint: 'chat' });
    expect((await t.processor.process(b.head, b.fence)).outcome).toBe('retry');
    // The 503 is not a crash, and the crash before it still counts.
    expect(await crashDuringCall('c', 3)).toBe(1);
    const d = await read('d');
    expect(d.head.progress).toMatchObject({ started: 2, attempts: 1 });
    expect(await t.processor.process(d.head, d.fence)).toEqual({ outcome: 'gave_up' });

    expect(t.pl.agent.chatCalls()).toHaveLength(3);
    const notice = t.pl.sink.posts.find((x) => x.kind === 'notice' && x.messageId === m.messageId);
    expect(notice?.text).toMatch(/^The answer was lost when the bridge restarted; please ask again\. \(ref [A-Z2-9]{6}\)$/);
    const ref = /ref ([A-Z2-9]{6})/.exec(notice!.text)![1];
    const failure = (await t.failures.recent(5)).find((f) => f.ref === ref);
    expect(failure?.reason).toBe('answer lost: the worker stopped during the agent call 2 times (AGENT_CALL_GUARANTEE=at-least-once)');
    // A worker resuming it after this says the notice again and never calls.
    const e = await read('e');
    expect(await t.processor.process(e.head, e.fence)).toEqual({ outcome: 'gave_up' });
    expect(t.pl.agent.chatCalls()).toHaveLength(3);
    expect(t.posted).toHaveLength(0);
  });
});
