import type { BackendFactory, RedisQueueBackend } from 'bullmq';
import { bullmqKeyCount } from './bullmq-fused.js';
import type { RedisTimeSource } from './redis-time-estimate.js';

/**
 * BullMQ's delayed jobs (a retry's backoff, a turn handed back) on Redis's clock, not the
 * worker's. BullMQ scores a delayed job with the `Date.now()` of the worker that delays it and
 * promotes it when the `Date.now()` of whichever worker fetches next passes the score: a worker
 * 10 minutes ahead of the others took every retry they delayed at once (a message's attempts
 * spent in seconds while the agent service was down), and a retry it delayed itself waited its
 * 10 minutes of lead for any other worker (after a deploy, its conversation held all along).
 *
 * This wraps a Worker's backend (through BullMQ's public `backendFactory`): the time BullMQ
 * passes to the scripts that score or promote delayed jobs becomes Redis's (its own value plus
 * this process's measured offset: no round trip), and the "next delayed job at" times that come
 * back, which the Worker compares with its own `Date.now()` to know how long to sleep, go back
 * to this process's clock. BullMQ's scripts are not changed.
 */

/** The scripts that score or promote delayed jobs, with their timestamp's place (ARGV index, from 1). */
const TIMESTAMP_ARGV: Readonly<Record<string, number>> = {
  moveToActive: 2,
  moveToDelayed: 2,
  moveToFinished: 2,
  retryJob: 2,
};

/** A timestamp BullMQ passed is its `Date.now()` of a moment ago; anything else means a changed call, left alone. */
const NOW_TOLERANCE_MS = 60_000;

/** The Worker's backend from `factory`, with delayed jobs on Redis's clock (`clock`). */
export function onRedisTime(factory: BackendFactory<RedisQueueBackend>, clock: RedisTimeSource): BackendFactory<RedisQueueBackend> {
  return (name, opts, flags) => {
    const backend = factory(name, opts, flags);
    const run = backend.execCommand.bind(backend);
    backend.execCommand = (client, commandName, args: unknown[]) => {
      const at = timestampIndex(commandName, args);
      if (at === undefined) return run(client, commandName, args);
      return clock.ready.then(async () => {
        const offset = clock.offsetMs();
        const sent = [...args];
        sent[at] = Math.round(Number(args[at]) + offset);
        return nextDelayedToLocal(await run(client, commandName, sent), offset);
      });
    };
    // The marker BullMQ blocks on carries the next delayed job's score (0: a job waits now).
    const waitForJob = backend.waitForJob.bind(backend);
    backend.waitForJob = async (blockTimeout) => {
      const marker = await waitForJob(blockTimeout);
      return marker && marker.score > 0 ? { ...marker, score: marker.score - clock.offsetMs() } : marker;
    };
    return backend;
  };
}

/** Where in `args` the script's timestamp is, or undefined for a script without one (or a call of another shape). */
function timestampIndex(commandName: string, args: unknown[]): number | undefined {
  const argv = TIMESTAMP_ARGV[commandName];
  const keys = bullmqKeyCount(commandName);
  if (argv === undefined || keys === undefined) return undefined;
  const at = keys + argv - 1;
  const value = Number(args[at]);
  return Number.isFinite(value) && Math.abs(value - Date.now()) < NOW_TOLERANCE_MS ? at : undefined;
}

/** BullMQ's fetch reply is [job fields, job ID, rate-limit delay, next delayed job at]: the last in local time. */
function nextDelayedToLocal(reply: unknown, offset: number): unknown {
  if (!Array.isArray(reply) || typeof reply[3] !== 'number' || reply[3] <= 0) return reply;
  const local = [...reply];
  local[3] = reply[3] - offset;
  return local;
}
