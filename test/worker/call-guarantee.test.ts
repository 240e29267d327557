import { describe, expect, it } from 'vitest';
import { ingressWithWorkerProcesses, kill9, spawnWorker, workerEnvFor } from '../support/child-worker.js';
import { startPipeline, webMessage, type Pipeline } from '../support/pipeline.js';
import type { IncomingMessage } from '../../src/core/message.js';

/** Ingress in this process; a worker process is SIGKILLed while the agent is answering. */
const { children, startIngress } = ingressWithWorkerProcesses();

async function killDuringTheCall(guarantee: 'at-least-once' | 'at-most-once') {
  const pl = await startIngress();
  const env = workerEnvFor(pl, { AGENT_CALL_GUARANTEE: guarantee });
  const first = await spawnWorker(env);
  children.push(first);
  pl.agent.hangNext(1, { endpoint: 'chat' });
  const m = webMessage(`killed during the call (${guarantee})`);
  await pl.bridge.ingress.handle(m);
  await pl.agent.waitForCalls(1, (c) => c.endpoint === 'chat');
  await kill9(first);
  children.push(await spawnWorker(env));
  return { pl, ...(await finishedForGood(pl, m, 25_000)) };
}

/**
 * Waits for `m`'s reply or notice, then for a second message of the same conversation, which
 * proves the first is finished for good; resolves with `m`'s posts and agent calls.
 */
async function finishedForGood(pl: Pick<Pipeline, 'sink' | 'bridge' | 'agent'>, m: IncomingMessage, timeoutMs = 20_000) {
  await pl.sink.waitFor((posts) => posts.some((x) => x.messageId === m.messageId && (x.kind === 'chunk' || x.kind === 'notice')), timeoutMs);
  const after = webMessage('and the next one');
  await pl.bridge.ingress.handle(after);
  await pl.sink.waitFor((posts) => posts.some((x) => x.messageId === after.messageId), 20_000);
  return { posts: pl.sink.posts.filter((x) => x.messageId === m.messageId), calls: pl.agent.chatCalls().filter((c) => c.message === m.text) };
}

describe('AGENT_CALL_GUARANTEE, a worker SIGKILLed during a slow agent call', () => {
  it('at-least-once (default): the message is asked again after recovery and answered once', async () => {
    const { posts, calls } = await killDuringTheCall('at-least-once');
    expect(calls).toHaveLength(2);
    expect(posts.map((x) => x.kind)).toEqual(['chunk']);
  }, 60_000);

  it('at-most-once: never asked again; the user reads that the answer was lost, with a reference', async () => {
    const { posts, calls, pl } = await killDuringTheCall('at-most-once');
    expect(calls).toHaveLength(1);
    expect(posts.map((x) => x.kind)).toEqual(['notice']);
    expect(posts[0]!.text).toMatch(/^The answer was lost when the bridge restarted; please ask again\. \(ref [A-Z2-9]{6}\)$/);
    const ref = /ref ([A-Z2-9]{6})/.exec(posts[0]!.text)![1];
    const failures = await pl.bridge.queueInfo.recentFailures(5);
    expect(failures.map((f) => f.ref)).toContain(ref);
  }, 60_000);
});

describe('AGENT_CALL_GUARANTEE, an agent call that times out after it was sent', () => {
  async function timeOutOnce(guarantee: 'at-least-once' | 'at-most-once') {
    const pl = await startPipeline({ AGENT_CALL_GUARANTEE: guarantee, AGENT_TIMEOUT_MS: '300', RETRY_BASE_DELAY_MS: '10' });
    try {
      pl.agent.hangNext(1, { endpoint: 'chat' });
      const m = webMessage(`timed out once (${guarantee})`);
      await pl.bridge.ingress.handle(m);
      return await finishedForGood(pl, m);
    } finally {
      await pl.close();
    }
  }

  it('at-least-once (default): asked again, answered once', async () => {
    const { posts, calls } = await timeOutOnce('at-least-once');
    expect(calls).toHaveLength(2);
    expect(posts.map((x) => x.kind)).toEqual(['chunk']);
  }, 30_000);

  it('at-most-once: the service may have run it, so it is not asked again; the user reads why, with a reference', async () => {
    const { posts, calls } = await timeOutOnce('at-most-once');
    expect(calls).toHaveLength(1);
    expect(posts.map((x) => x.kind)).toEqual(['notice']);
    expect(posts[0]!.text).toMatch(/^The agent didn't answer in time\. Please try again\. \(ref [A-Z2-9]{6}\)$/);
  }, 30_000);
});

describe('AGENT_CALL_GUARANTEE, a gateway that forwarded the call and lost its answer (502, 504)', () => {
  async function gatewayFailsOnce(guarantee: 'at-least-once' | 'at-most-once', status: number) {
    const pl = await startPipeline({ AGENT_CALL_GUARANTEE: guarantee, RETRY_BASE_DELAY_MS: '10' });
    try {
      // What a proxy in front of the service says when the service took the call and did not answer in time.
      pl.agent.failNext(1, { status, body: `<html><body><h1>${status} Gateway error</h1></body></html>` }, { endpoint: 'chat' });
      const m = webMessage(`gateway ${status} (${guarantee})`);
      await pl.bridge.ingress.handle(m);
      return await finishedForGood(pl, m);
    } finally {
      await pl.close();
    }
  }

  it('at-most-once: a 504 or 502 may mean the service ran (and billed) the call, so it is not asked again; the user reads why', async () => {
    for (const status of [504, 502]) {
      const { posts, calls } = await gatewayFailsOnce('at-most-once', status);
      expect(calls).toHaveLength(1);
      expect(posts.map((x) => x.kind)).toEqual(['notice']);
      expect(posts[0]!.text).toMatch(/^The agent service is having trouble right now\. Please try again later\. \(ref [A-Z2-9]{6}\)$/);
    }
  }, 30_000);

  it('at-least-once (default): asked again, answered once', async () => {
    const { posts, calls } = await gatewayFailsOnce('at-least-once', 504);
    expect(calls).toHaveLength(2);
    expect(posts.map((x) => x.kind)).toEqual(['chunk']);
  }, 30_000);
});

describe('AGENT_CALL_GUARANTEE=at-least-once, a worker that keeps dying during the call (audit R4)', () => {
  /** What the agent does with each call of the message, in order; calls past the list are answered. */
  type Step = 'crash' | 'fail';

  /**
   * One message; its worker process is SIGKILLed during each call planned as `crash` (the
   * emulator holds the call until then) and a new worker started; a `fail` call is answered
   * with a 503 (the worker retries it). Ends once the message has a post and a later message
   * of the conversation was answered (so it is finished for good); resolves with the message's
   * agent calls and posts.
   */
  async function crashLoop(steps: Step[]) {
    const pl = await startIngress();
    const env = workerEnvFor(pl, { RETRY_BASE_DELAY_MS: '10' });
    let worker = await spawnWorker(env);
    children.push(worker);
    const m = webMessage(`crash loop ${steps.join(',')}`);
    const calls = () => pl.agent.chatCalls().filter((c) => c.message === m.text).length;
    const posted = () => pl.sink.posts.some((x) => x.messageId === m.messageId && (x.kind === 'chunk' || x.kind === 'notice'));
    let crashes = 0;
    for (const [k, step] of steps.entries()) {
      if (step === 'crash') pl.agent.hangNext(1, { endpoint: 'chat' });
      else pl.agent.failNext(1, { status: 503, body: { error: 'unavailable' } }, { endpoint: 'chat' });
      if (k === 0) await pl.bridge.ingress.handle(m);
      await until(() => calls() > k || posted(), 20_000);
      if (calls() <= k) break;
      if (step === 'crash') {
        await kill9(worker);
        crashes++;
        worker = await spawnWorker(env);
        children.push(worker);
      }
    }
    await pl.sink.waitFor(() => posted(), 25_000);
    const billed = calls();
    // A hang planned for a call that never came must not hold up the next message.
    pl.agent.reset();
    const after = webMessage('and the next one');
    await pl.bridge.ingress.handle(after);
    await pl.sink.waitFor((posts) => posts.some((x) => x.messageId === after.messageId), 20_000);
    return { pl, crashes, calls: billed + calls(), posts: pl.sink.posts.filter((x) => x.messageId === m.messageId) };
  }

  it('three crashes planned: called twice, then the user reads that the answer was lost, with a reference in the failure log', async () => {
    const { pl, crashes, calls, posts } = await crashLoop(['crash', 'crash', 'crash']);
    // Before: 4 calls (one per crash, and the one answered) and the answer posted.
    expect({ crashes, calls }).toEqual({ crashes: 2, calls: 2 });
    expect(posts.map((x) => x.kind)).toEqual(['notice']);
    expect(posts[0]!.text).toMatch(/^The answer was lost when the bridge restarted; please ask again\. \(ref [A-Z2-9]{6}\)$/);
    const ref = /ref ([A-Z2-9]{6})/.exec(posts[0]!.text)![1];
    expect((await pl.bridge.queueInfo.recentFailures(5)).map((f) => f.ref)).toContain(ref);
  }, 120_000);

  it('a call the agent answered with an error is not a crash: crash, 503, then answered (3 calls, the answer posted)', async () => {
    const { crashes, calls, posts } = await crashLoop(['crash', 'fail']);
    expect({ crashes, calls }).toEqual({ crashes: 1, calls: 3 });
    expect(posts.map((x) => x.kind)).toEqual(['chunk']);
  }, 90_000);
});

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}
