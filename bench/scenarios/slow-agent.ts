import { now, sleep } from '../lib/clock.js';
import type { Child } from '../lib/children.js';
import { max, median } from '../lib/stats.js';
import type { ProbeReading } from '../procs/probe.js';
import { row, TARGETS, type ResultRow } from '../report/rows.js';
import { collectPosts, waitForPosts, type BenchContext } from './context.js';
import { sendMany, warmUp } from './drive.js';
import { openPath, type GenericPath, type PathKind } from './paths.js';

export interface SlowResult {
  /** Jobs active at once, median while jobs were still waiting. */
  inFlight: number;
  /** Replies per second from resume to the last reply. */
  throughput: number;
  /** Throughput as a percentage of concurrency / agent delay. */
  idealPct: number;
  /** Sum over the worker processes. */
  rssBaseMb: number;
  rssPeakMb: number;
  /** (peak - base) / in flight. */
  rssPerInFlightKb: number;
  /** Highest p99 of the worker processes. */
  eldP99Ms: number;
  /** Worker CPU time per message (µs), all processes. */
  cpuPerMessageUs: number;
}

/**
 * Fills every worker slot `waves` times over with a slow agent: queues the messages on the
 * paused queue, resumes it, and reads throughput, jobs in flight (sampled from Redis), and
 * each worker's RSS and event-loop delay.
 */
export async function measureSlow(
  ctx: BenchContext,
  path: GenericPath,
  workers: readonly Child[],
  slots: number,
  waves: number,
  tag: string,
): Promise<SlowResult> {
  const count = slots * waves;
  const delay = ctx.settings.slowDelayMs;
  await path.pause();
  await sendMany(count, 64, (i) => path.send(`${tag}-${i}`, `${tag}-${i}`, `slow question ${i}`));
  await collectPosts(ctx);
  await Promise.all(workers.map((w) => w.call('probeStart')));
  const resumedAt = now();
  await path.resume();

  const samples: number[] = [];
  const all: number[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const c = await path.counts();
      all.push(c.active);
      if (c.waiting > 0) samples.push(c.active);
      await sleep(250);
    }
  })();
  try {
    await waitForPosts(ctx, count, 60_000 + waves * delay * 3);
  } finally {
    sampling = false;
    await sampler;
  }
  const readings = await Promise.all(workers.map((w) => w.call<ProbeReading>('probeRead')));
  const posts = await collectPosts(ctx);
  if (posts.byId.size !== count) throw new Error(`${path.kind}: ${posts.byId.size} distinct replies for ${count} messages`);

  const throughput = count / ((max(posts.ats) - resumedAt) / 1000);
  const inFlight = samples.length > 0 ? median(samples) : max(all);
  const base = readings.reduce((sum, r) => sum + r.rssBase, 0);
  const peak = readings.reduce((sum, r) => sum + r.rssPeak, 0);
  return {
    inFlight,
    throughput,
    idealPct: (100 * throughput) / (slots / (delay / 1000)),
    rssBaseMb: base / 2 ** 20,
    rssPeakMb: peak / 2 ** 20,
    rssPerInFlightKb: (peak - base) / 1024 / Math.max(1, inFlight),
    eldP99Ms: max(readings.map((r) => r.eldP99Ms)),
    cpuPerMessageUs: (readings.reduce((sum, r) => sum + r.cpuMs, 0) * 1000) / count,
  };
}

/** Warms running workers with the fast agent, then measures them with the slow one. */
export async function slowRun(
  ctx: BenchContext,
  path: GenericPath,
  workers: readonly Child[],
  concurrency: number,
  waves: number,
  tag: string,
): Promise<SlowResult> {
  try {
    await warmUp(ctx, path, Math.min(2_000, workers.length * 500), `${tag}-warm`);
    await ctx.services.call('setDelay', ctx.settings.slowDelayMs);
    const r = await measureSlow(ctx, path, workers, workers.length * concurrency, waves, tag);
    ctx.log(
      `  ${tag} ${path.kind}: ${workers.length}×c${concurrency}: ${Math.round(r.throughput)} msg/s (${r.idealPct.toFixed(1)}% of ideal), ` +
        `${r.inFlight} in flight, RSS ${r.rssBaseMb.toFixed(0)}→${r.rssPeakMb.toFixed(0)} MB, ELD p99 ${r.eldP99Ms.toFixed(1)} ms, ${Math.round(r.cpuPerMessageUs)} µs CPU per message`,
    );
    return r;
  } finally {
    await ctx.services.call('setDelay', 0);
  }
}

/** Scenario 3: a 2 s agent, one worker process at concurrency 500 and 2,000. */
export async function slowAgentScenario(ctx: BenchContext): Promise<ResultRow[]> {
  const s = ctx.settings;
  const rows: ResultRow[] = [];
  const paths: GenericPath[] = [];
  try {
    for (const kind of ['floor', 'bridge'] as const) paths.push(await openPath(ctx, kind, 's3'));
    for (const c of s.slowConcurrencies) {
      const r = {} as Record<PathKind, SlowResult>;
      try {
        // Both paths' workers start together; the idle one costs next to nothing meanwhile.
        const workers = await Promise.all(paths.map((p) => p.startWorkers(1, c, `s3c${c}-${p.kind}-worker`)));
        for (const [i, path] of paths.entries()) r[path.kind] = await slowRun(ctx, path, workers[i]!, c, s.slowWaves, `s3c${c}`);
      } finally {
        await Promise.all(paths.map((p) => p.stopWorkers()));
      }
      const last = c === Math.max(...s.slowConcurrencies);
      const waves = `${c * s.slowWaves} messages (${s.slowWaves} waves), agent ${s.slowDelayMs / 1000} s`;
      rows.push(row(`3 · slow agent c=${c}: in flight`, 'jobs', r.bridge.inFlight, r.floor.inFlight, undefined, undefined, 0));
      rows.push(row(`3 · slow agent c=${c}: throughput`, 'msg/s', r.bridge.throughput, r.floor.throughput, undefined, waves, 0));
      rows.push(row(`3 · slow agent c=${c}: share of ideal (c / 2 s)`, '%', r.bridge.idealPct, r.floor.idealPct, last ? TARGETS.idealShare : undefined));
      rows.push(row(`3 · slow agent c=${c}: worker RSS peak`, 'MB', r.bridge.rssPeakMb, r.floor.rssPeakMb, undefined, `idle after GC: bridge ${r.bridge.rssBaseMb.toFixed(0)} MB, floor ${r.floor.rssBaseMb.toFixed(0)} MB`, 0));
      rows.push(row(`3 · slow agent c=${c}: RSS per in-flight conversation`, 'KB', r.bridge.rssPerInFlightKb, r.floor.rssPerInFlightKb, last ? TARGETS.rssPerInFlight : undefined, '(peak − idle) / in flight', 0));
      rows.push(row(`3 · slow agent c=${c}: event-loop delay p99`, 'ms', r.bridge.eldP99Ms, r.floor.eldP99Ms));
    }
  } finally {
    await Promise.all(paths.map((p) => p.close()));
  }
  return rows;
}
