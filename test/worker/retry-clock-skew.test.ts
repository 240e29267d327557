import { describe, expect, it } from 'vitest';
import { jobIdFor } from '../../src/queue/types.js';
import type { IncomingMessage } from '../../src/core/message.js';
import { webMessage, type Pipeline } from '../support/pipeline.js';
import { ingressWithWorkerProcesses, kill9, spawnWorker, workerEnvFor } from '../support/child-worker.js';
import { until } from '../support/until.js';

/**
 * A retry's wait (BullMQ delayed job) across worker processes whose clocks disagree. BullMQ
 * scores a delayed job with the clock of the worker that delays it and promotes it with the
 * clock of whichever worker fetches next: the bridge gives both Redis's time (redis-time-backend.ts).
 */
const { children, startIngress } = ingressWithWorkerProcesses();
const TEN_MINUTES = 10 * 60_000;

async function setup(env: Record<string, string>) {
  const pl = await startIngress();
  const start = async (clockSkewMs: number) => {
    const child = await spawnWorker(workerEnvFor(pl, { ...env, CLOCK_SKEW_MS: String(clockSkewMs) }));
    children.push(child);
    return child;
  };
  return { pl, start };
}

/** `m`'s first call failed (503) and its job now waits out the retry's backoff. */
async function failedOnceAndWaiting(pl: Pipeline, m: IncomingMessage): Promise<void> {
  pl.agent.failNext(1, { status: 503 }, { endpoint: 'chat' });
  await pl.bridge.ingress.handle(m);
  const jobId = jobIdFor('web', m.messageId);
  await until(async () => (await pl.bridge.queue.queue.getJobState(jobId)) === 'delayed', 'the retry waits', 20_000);
}

const postedTo = (pl: Pipeline, m: IncomingMessage) => pl.sink.posts.filter((x) => x.messageId === m.messageId);

describe('retry waits across workers whose clocks disagree', () => {
  it('a worker 10 min ahead does not take a retry another worker delayed before its backoff is over', async () => {
    // The first retry waits 60-120 s.
    const { pl, start } = await setup({ RETRY_BASE_DELAY_MS: '120000', JOB_ATTEMPTS: '3' });
    const onTime = await start(0);
    const m = webMessage('asked while the agent service is down');
    await failedOnceAndWaiting(pl, m);
    await kill9(onTime);
    await start(TEN_MINUTES);
    // The worker ahead has fetched (a fetch is where BullMQ promotes due retries): it answered this one.
    const other = webMessage('another channel', { channelId: 'c2' });
    await pl.bridge.ingress.handle(other);
    await pl.sink.waitFor((posts) => posts.some((x) => x.messageId === other.messageId), 20_000);
    await new Promise((r) => setTimeout(r, 1000));
    // Before: the retry was taken at once, so a message's attempts ran out in seconds in an outage.
    expect(postedTo(pl, m)).toEqual([]);
    expect(pl.agent.chatCalls()).toHaveLength(2);
  });

  it('a retry delayed by a worker 10 min ahead is taken when due by a worker on time once that one is gone', async () => {
    // The first retry waits 0.5-1 s.
    const { pl, start } = await setup({ RETRY_BASE_DELAY_MS: '1000', JOB_ATTEMPTS: '3' });
    const ahead = await start(TEN_MINUTES);
    const m = webMessage('asked just before a deploy');
    await failedOnceAndWaiting(pl, m);
    await kill9(ahead);
    await start(0);
    // Before: it waited for the 10 minutes of lead to pass, its conversation held behind it.
    await pl.sink.waitFor((posts) => posts.some((x) => x.messageId === m.messageId), 20_000);
    expect(postedTo(pl, m)).toHaveLength(1);
    expect(pl.agent.chatCalls()).toHaveLength(2);
  });
});
