import { Redis } from 'ioredis';
import { Queue, Worker, createRedisBackend, type BackendFactory, type RedisQueueBackend } from 'bullmq';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { onRedisTime } from '../../src/queue/redis-time-backend.js';
import { RedisTimeEstimate, redisTimeMsAt } from '../../src/queue/redis-time-estimate.js';
import { newPrefix } from '../support/bridge-harness.js';
import { deleteKeys } from '../support/redis-cleanup.js';
import { until } from '../support/until.js';

/**
 * A BullMQ Worker on the backend of redis-time-backend.ts, in a process whose clock is 10 min
 * off the one that delayed the job (here: this process before its clock is set off). The
 * multi-process case is test/worker/retry-clock-skew.test.ts.
 */
const redis = new Redis({ maxRetriesPerRequest: null });
const prefix = newPrefix('redis-time');
const TEN_MINUTES = 10 * 60_000;
const closing: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  vi.restoreAllMocks();
  for (const close of closing.splice(0)) await close();
});
afterAll(async () => {
  await deleteKeys(prefix);
  redis.disconnect();
});

function skewClock(offsetMs: number): void {
  const real = Date.now.bind(Date);
  vi.spyOn(Date, 'now').mockImplementation(() => real() + offsetMs);
}

/** A Worker on `name` with Redis's clock, counting its fetches (moveToActive). */
async function worker(name: string, processed: string[]) {
  const clock = new RedisTimeEstimate(() => redisTimeMsAt(redis, `${prefix}:${name}:meta`));
  const counting: BackendFactory<RedisQueueBackend> = (n, opts, flags) => {
    const backend = createRedisBackend(n, opts, flags);
    const run = backend.execCommand.bind(backend);
    backend.execCommand = (client, command, args) => {
      if (command === 'moveToActive') fetches.count++;
      return run(client, command, args);
    };
    return backend;
  };
  const fetches = { count: 0 };
  const w = new Worker(name, async (job) => void processed.push(job.id!), { connection: redis, prefix }, onRedisTime(counting, clock));
  closing.push(async () => {
    clock.stop();
    await w.close();
  });
  await clock.ready;
  return { fetches };
}

async function queue(name: string): Promise<Queue> {
  const q = new Queue(name, { connection: redis, prefix });
  closing.push(() => q.close());
  return q;
}

describe('delayed jobs on Redis clock in a worker whose clock is off', () => {
  it('10 min ahead: a job delayed by a minute waits, and the worker does not poll Redis in a loop meanwhile', async () => {
    const q = await queue('ahead');
    await q.add('j', {}, { jobId: 'later', delay: 60_000 });
    await q.add('j', {}, { jobId: 'now' });
    skewClock(TEN_MINUTES);
    const processed: string[] = [];
    const { fetches } = await worker('ahead', processed);
    await until(() => processed.includes('now'), 'the job without delay is taken');
    const before = fetches.count;
    await new Promise((r) => setTimeout(r, 1000));
    expect(processed).toEqual(['now']);
    expect(await q.getJobState('later')).toBe('delayed');
    // A worker that compared Redis's times with its own clock would see the job due and fetch without end.
    expect(fetches.count - before).toBeLessThan(10);
  });

  it('10 min behind: a job delayed by half a second is taken when due', async () => {
    const q = await queue('behind');
    await q.add('j', {}, { jobId: 'soon', delay: 500 });
    skewClock(-TEN_MINUTES);
    const processed: string[] = [];
    await worker('behind', processed);
    await until(() => processed.includes('soon'), 'the delayed job is taken', 5_000);
  });
});

describe("the process's estimate of Redis's clock", () => {
  it("is Redis's TIME less this process's clock, without a round trip per use", async () => {
    let measures = 0;
    const clock = new RedisTimeEstimate(async () => (measures++, Date.now() + TEN_MINUTES));
    closing.push(async () => clock.stop());
    await clock.ready;
    for (let i = 0; i < 100; i++) expect(Math.abs(clock.offsetMs() - TEN_MINUTES)).toBeLessThan(50);
    expect(measures).toBe(1);
  });

  it('is the local clock while Redis cannot be reached at start, and Redis once it can', async () => {
    let reachable = false;
    const clock = new RedisTimeEstimate(async () => {
      if (!reachable) throw new Error('connect ECONNREFUSED');
      return Date.now() - TEN_MINUTES;
    });
    closing.push(async () => clock.stop());
    await clock.ready;
    expect(clock.offsetMs()).toBe(0);
    reachable = true;
    await until(() => Math.abs(clock.offsetMs() + TEN_MINUTES) < 50, 'the next measure', 5_000);
  });
});
