import { afterEach, describe, expect, it } from 'vitest';
import { createAgentApi } from '../../src/agent-api/client.js';
import type { ReplyPort } from '../../src/core/reply-port.js';
import { FailureLog } from '../../src/diagnostics/failure-log.js';
import { Metrics } from '../../src/metrics.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import type { Fence } from '../../src/queue/mailbox.js';
import { jobIdFor } from '../../src/queue/types.js';
import { DeliveryGate } from '../../src/worker/delivery-gate.js';
import { MessageProcessor } from '../../src/worker/process-message.js';
import { startPipeline, webMessage, type Pipeline } from '../support/pipeline.js';
import { sinkPort } from '../support/sink.js';

/** A promise and its resolve/reject, to end a post exactly when the test says. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every callback queued so far (promise jobs, immediates) run. */
const settle = () => new Promise((r) => setTimeout(r, 5));

async function until(check: () => boolean, what: string, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** `n` posts through `gate`, each running until the test ends it; records which started, in order. */
function posts(gate: DeliveryGate, n: number) {
  const started: number[] = [];
  const ends = Array.from({ length: n }, () => deferred<string>());
  const results = ends.map((end, i) =>
    gate.run(async () => {
      started.push(i);
      return end.promise;
    }),
  );
  return { started, ends, results };
}

describe('DeliveryGate', () => {
  it('lets `limit` posts run at once; the others start in arrival order as places free', async () => {
    const gate = new DeliveryGate(2, 60_000);
    const p = posts(gate, 5);
    await settle();
    expect(p.started).toEqual([0, 1]);
    expect(gate.waiting).toBe(3);

    p.ends[1]!.resolve('b');
    await settle();
    expect(p.started).toEqual([0, 1, 2]);
    p.ends[0]!.resolve('a');
    p.ends[2]!.resolve('c');
    await settle();
    expect(p.started).toEqual([0, 1, 2, 3, 4]);
    expect(gate.waiting).toBe(0);
    p.ends[3]!.resolve('d');
    p.ends[4]!.resolve('e');
    expect(await Promise.all(p.results)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('a post that fails frees its place, and its caller gets the error', async () => {
    const gate = new DeliveryGate(1, 60_000);
    const p = posts(gate, 2);
    await settle();
    expect(p.started).toEqual([0]);
    p.ends[0]!.reject(new Error('platform said no'));
    await expect(p.results[0]).rejects.toThrow('platform said no');
    await settle();
    expect(p.started).toEqual([0, 1]);
    p.ends[1]!.resolve('ok');
    expect(await p.results[1]).toBe('ok');
  });

  it('a post held longer than maxHoldMs gives its place to the next; its own end later frees nothing', async () => {
    let clock = 0;
    const gate = new DeliveryGate(1, 30, () => clock);
    const p = posts(gate, 3);
    await settle();
    expect(p.started).toEqual([0]);
    // Post 0 hangs (a platform's rate-limit queue) past the bound: post 1 goes.
    clock = 100;
    await until(() => p.started.length === 2, 'post 1 to start');
    expect(p.started).toEqual([0, 1]);
    // The clock stands still now, so post 1 keeps its place: post 0's end must not let post 2 in.
    p.ends[0]!.resolve('late');
    expect(await p.results[0]).toBe('late');
    await settle();
    expect(p.started).toEqual([0, 1]);
    p.ends[1]!.resolve('b');
    await until(() => p.started.length === 3, 'post 2 to start');
    p.ends[2]!.resolve('c');
    expect(await Promise.all(p.results.slice(1))).toEqual(['b', 'c']);
  });

  it('a limit of 0 gates nothing', async () => {
    const gate = new DeliveryGate(0, 30);
    const p = posts(gate, 4);
    await settle();
    expect(p.started).toEqual([0, 1, 2, 3]);
    p.ends.forEach((e) => e.resolve('x'));
    await Promise.all(p.results);
  });
});

let pl: Pipeline | undefined;
afterEach(async () => {
  await pl?.close();
  pl = undefined;
});

/**
 * The worker's processor with the real Redis, agent emulator and sink: two answered messages
 * in two channels, the first one's post held open by the test.
 */
async function twoAnswers(delivery: { concurrency: number; maxHoldMs: number }) {
  /** Set to give the jobs back, as a worker whose shutdown timed out does. */
  let abandoned = false;
  pl = await startPipeline({ ROLE: 'ingress' });
  const p = pl;
  const sink = sinkPort(p.sink.url, 2000);
  const holdFirst = deferred();
  const postsStarted: string[] = [];
  const postsDone: string[] = [];
  const port: ReplyPort = {
    ...sink,
    postChunk: async (target, chunk, index, info) => {
      postsStarted.push(target.channelId);
      if (target.channelId === 'c1') await holdFirst.promise;
      await sink.postChunk(target, chunk, index, info);
      postsDone.push(target.channelId);
    },
  };
  const processor = new MessageProcessor({
    agent: createAgentApi(p.agent.agentConfig()),
    ports: { web: port },
    mailbox: p.bridge.queue.mailbox,
    logger: createLogger({ level: 'silent', registry: new SecretRegistry() }),
    metrics: p.bridge.metrics,
    retry: { attempts: 3, baseDelayMs: 20 },
    failures: new FailureLog(p.bridge.redis, `${p.prefix}:chat`),
    threadContext: { maxMessages: 5, maxChars: 1000 },
    delivery,
  });
  const runs = [];
  for (const channelId of ['c1', 'c2']) {
    const m = webMessage(`question in ${channelId}`, { channelId });
    await p.bridge.ingress.handle(m);
    const jobId = jobIdFor('web', m.messageId);
    await p.bridge.redis.set(p.bridge.queue.mailbox.keys.jobLock(jobId), 'w', 'PX', 60_000);
    const fence: Fence = { jobId, token: 'w', lockDurationMs: 60_000, abandoned: () => abandoned };
    const acquired = await p.bridge.queue.mailbox.acquire(`web:local:${channelId}`, fence);
    if (acquired.status !== 'ok' || !acquired.head?.message) throw new Error(`no head in ${channelId}`);
    runs.push(processor.process({ ...acquired.head, message: acquired.head.message }, fence));
    // The answers come in in this order.
    await until(() => p.agent.chatCalls().length === runs.length, 'the agent call');
  }
  return { runs, postsStarted, postsDone, processor, release: () => holdFirst.resolve(), abandon: () => (abandoned = true), pl: p };
}

describe('the worker posts answered messages through the gate', () => {
  it('beyond its limit an answer waits for the one ahead of it, and is posted once that one is', async () => {
    const t = await twoAnswers({ concurrency: 1, maxHoldMs: 60_000 });
    await until(() => t.postsStarted.length === 1, 'the first post');
    // c2's answer is in and recorded, but its post waits its turn, and the gauge says so.
    await until(() => t.processor.repliesWaiting === 1, "c2's answer to wait");
    await new Promise((r) => setTimeout(r, 200));
    expect(t.postsStarted).toEqual(['c1']);
    const metrics = new Metrics();
    metrics.watchRepliesWaiting(() => t.processor.repliesWaiting);
    expect(await metrics.registry.metrics()).toMatch(/^agent_bridge_replies_waiting_to_post 1$/m);
    t.release();
    expect(await Promise.all(t.runs)).toEqual([{ outcome: 'replied' }, { outcome: 'replied' }]);
    expect(t.postsDone).toEqual(['c1', 'c2']);
    expect(t.processor.repliesWaiting).toBe(0);
    expect(t.pl.sink.posts.filter((x) => x.kind === 'chunk').map((x) => x.channelId)).toEqual(['c1', 'c2']);
  });

  it('an answer still waiting when the worker gives its jobs back (shutdown timed out) is not posted by it', async () => {
    const t = await twoAnswers({ concurrency: 1, maxHoldMs: 60_000 });
    await until(() => t.processor.repliesWaiting === 1, "c2's answer to wait");
    t.abandon();
    t.release();
    // The post under way finishes (it was sent before); the one that waited starts nothing.
    const [first, second] = await Promise.all(t.runs);
    expect(first).toEqual({ outcome: 'replied' });
    expect(second).toEqual({ outcome: 'lost' });
    expect(t.postsStarted).toEqual(['c1']);
    // The agent was asked once per message: the recorded answer is what the next owner posts.
    expect(t.pl.agent.chatCalls()).toHaveLength(2);
  });

  it("a post slower than maxHoldMs does not hold up another channel's reply", async () => {
    const t = await twoAnswers({ concurrency: 1, maxHoldMs: 50 });
    await until(() => t.postsDone.length === 1, "c2's reply");
    expect(t.postsDone).toEqual(['c2']);
    t.release();
    expect(await Promise.all(t.runs)).toEqual([{ outcome: 'replied' }, { outcome: 'replied' }]);
    expect(t.postsDone).toEqual(['c2', 'c1']);
  });
});
