import { now } from '../lib/clock.js';
import { max } from '../lib/stats.js';
import { row, TARGETS, type ResultRow } from '../report/rows.js';
import { collectPosts, waitForPosts, type BenchContext } from './context.js';
import { sendMany, warmUp } from './drive.js';
import { openPath, type GenericPath, type PathKind } from './paths.js';

export interface DrainResult {
  /** Replies per second from the moment the queue was resumed to the last reply. */
  rate: number;
  /** Messages per second handed to the paused queue (the ingress alone). */
  enqueueRate: number;
}

/**
 * Queues `count` messages (one conversation each) on the paused queue, resumes it and times
 * the worker from then until the last reply reaches the sink.
 */
export async function measureDrain(ctx: BenchContext, path: GenericPath, count: number, tag: string): Promise<DrainResult> {
  await path.pause();
  const enqueueRate = await sendMany(count, 64, (i) => path.send(`${tag}-${i}`, `${tag}-${i}`, `question ${i}`));
  await collectPosts(ctx);
  const resumedAt = now();
  await path.resume();
  await waitForPosts(ctx, count, 60_000 + count * 2);
  const posts = await collectPosts(ctx);
  if (posts.byId.size !== count) throw new Error(`${path.kind}: ${posts.byId.size} distinct replies for ${count} messages`);
  return { rate: count / ((max(posts.ats) - resumedAt) / 1000), enqueueRate };
}

/** Scenario 1: maximum throughput of one worker process at concurrency 50, fast agent. */
export async function throughputScenario(ctx: BenchContext): Promise<ResultRow[]> {
  const s = ctx.settings;
  const best: Record<PathKind, DrainResult> = { bridge: { rate: 0, enqueueRate: 0 }, floor: { rate: 0, enqueueRate: 0 } };
  const paths: GenericPath[] = [];
  try {
    for (const kind of ['floor', 'bridge'] as const) {
      const path = await openPath(ctx, kind, 's1');
      paths.push(path);
      await path.startWorkers(1, 50, `s1-${kind}-worker`);
      await warmUp(ctx, path, s.warmupMessages, 'warm');
    }
    for (let round = 1; round <= s.throughputRounds; round++) {
      for (const path of paths) {
        const r = await measureDrain(ctx, path, s.throughputMessages, `r${round}`);
        ctx.log(`  s1 ${path.kind} round ${round}: ${Math.round(r.rate)} msg/s drained, ${Math.round(r.enqueueRate)} msg/s enqueued`);
        best[path.kind] = { rate: Math.max(best[path.kind].rate, r.rate), enqueueRate: Math.max(best[path.kind].enqueueRate, r.enqueueRate) };
      }
    }
  } finally {
    await Promise.all(paths.map((p) => p.close()));
  }
  const note = `${s.throughputMessages} messages, 1 per conversation; best of ${s.throughputRounds}`;
  return [
    row('1 · throughput, 1 worker process, concurrency 50', 'msg/s', best.bridge.rate, best.floor.rate, TARGETS.throughput, note, 0),
    row('1 · ingress enqueue rate (64 concurrent sends)', 'msg/s', best.bridge.enqueueRate, best.floor.enqueueRate, undefined, 'ingress.handle vs Queue.add, queue paused', 0),
  ];
}
