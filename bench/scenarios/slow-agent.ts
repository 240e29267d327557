import { now, sleep } from '../lib/clock.js';
import type { Child } from '../lib/children.js';
import { max, median } from '../lib/stats.js';
import type { ProbeReading } from '../procs/probe.js';
import { row, rssUnder, TARGETS, type ResultRow } from '../report/rows.js';
import { collectPosts, waitForPosts, type BenchContext } from './context.js';
import { sendMany, warmUp } from './drive.js';
import { openPath, type GenericPath, type PathKind } from './paths.js';

export interface SlowResult {
  /** Chat calls open at the agent emulator at once, median while jobs were still waiting (after the first second). */
  inFlight: number;
  /** The most chat calls open at the agent emulator at once: the headline figure, and the divisor of RSS per call. */
  inFlightPeak: number;
  /** BullMQ's active jobs, median while jobs were still waiting (a job may be active yet not calling). */
  activeJobs: number;
  /** Replies per second from resume to the last reply. */
  throughput: number;
  /** Throughput as a percentage of concurrency / agent delay. */
  idealPct: number;
  /**
   * Replies per second once every slot has answered once: from the `slots`-th reply to the
   * last (waves − 1 full cycles of every slot), so the one-time ramp of the first wave is left
   * out. What a worker holds while its slots stay busy; undefined with one wave.
   */
  sustained: number | undefined;
  /** `sustained` as a percentage of concurrency / agent delay. */
  sustainedIdealPct: number | undefined;
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
 * paused queue, resumes it, and reads throughput, calls in flight (counted where they arrive,
 * at the agent emulator), and each worker's RSS and event-loop delay.
 */
export async function measureSlow(
  ctx: BenchContext,
  path: GenericPath,
  workers: readonly Child[],
  slots: number,
  waves: number,
  tag: string,
  delay: number = ctx.settings.slowDelayMs,
): Promise<SlowResult> {
  const count = slots * waves;
  await path.pause();
  await sendMany(count, 64, (i) => path.send(`${tag}-${i}`, `${tag}-${i}`, `slow question ${i}`));
  await collectPosts(ctx);
  await Promise.all(workers.map((w) => w.call('probeStart')));
  const liveHeap = ctx.settings.heap ? liveHeapPerCall(ctx, path, workers, delay) : undefined;
  const resumedAt = now();
  await path.resume();

  const samples: number[] = [];
  const active: number[] = [];
  const all: number[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const [c, agent] = await Promise.all([path.counts(), ctx.services.call<{ open: number }>('agentOpen')]);
      all.push(agent.open);
      // The first second after resume is the ramp-up; it would pull the median down.
      if (c.waiting > 0 && now() - resumedAt > 1_000) {
        samples.push(agent.open);
        active.push(c.active);
      }
      await sleep(250);
    }
  })();
  try {
    await waitForPosts(ctx, count, 60_000 + waves * delay * 3);
  } catch (err) {
    // Say whose replies are missing, and what its workers last said (a floor job that failed is lost: it never retries).
    const said = workers.map((w) => w.output()).join('');
    throw new Error(`${path.kind}: ${(err as Error).message}; its workers' last output: ${said}`, { cause: err });
  } finally {
    sampling = false;
    await sampler;
  }
  await liveHeap;
  const readings = await Promise.all(workers.map((w) => w.call<ProbeReading>('probeRead')));
  const posts = await collectPosts(ctx);
  if (posts.byId.size !== count) throw new Error(`${path.kind}: ${posts.byId.size} distinct replies for ${count} messages`);

  const throughput = count / ((max(posts.ats) - resumedAt) / 1000);
  const sustained = sustainedRate([...posts.byId.values()], slots);
  const ideal = slots / (delay / 1000);
  if (ctx.settings.timeline) logTimeline(ctx, path.kind, posts.ats, resumedAt, all);
  const inFlight = samples.length > 0 ? median(samples) : max(all);
  const base = readings.reduce((sum, r) => sum + r.rssBase, 0);
  const peak = readings.reduce((sum, r) => sum + r.rssPeak, 0);
  return {
    inFlight,
    inFlightPeak: max(all),
    activeJobs: active.length > 0 ? median(active) : 0,
    throughput,
    idealPct: (100 * throughput) / ideal,
    sustained,
    sustainedIdealPct: sustained === undefined ? undefined : (100 * sustained) / ideal,
    rssBaseMb: base / 2 ** 20,
    rssPeakMb: peak / 2 ** 20,
    rssPerInFlightKb: (peak - base) / 1024 / Math.max(1, max(all)),
    eldP99Ms: max(readings.map((r) => r.eldP99Ms)),
    cpuPerMessageUs: (readings.reduce((sum, r) => sum + r.cpuMs, 0) * 1000) / count,
  };
}

/**
 * Replies per second from the `slots`-th reply (by then every slot has answered once) to the
 * last. Each slot starts its next call when its reply is out, so this window holds whole cycles
 * of every slot, whatever width the first wave got from the ramp: the rate the worker sustains.
 */
export function sustainedRate(replyTimes: readonly number[], slots: number): number | undefined {
  if (replyTimes.length <= slots) return undefined;
  const sorted = [...replyTimes].sort((a, b) => a - b);
  const seconds = (sorted[sorted.length - 1]! - sorted[slots - 1]!) / 1000;
  return seconds > 0 ? (sorted.length - slots) / seconds : undefined;
}

/**
 * BENCH_TIMELINE: replies per 100 ms since the resume (`20:8` = 8 replies between 2.0 and 2.1 s)
 * and the calls open at the agent every 250 ms. Each slot's next call starts when its reply is
 * out, so a wave keeps the width it got from the ramp and from answering the first wave.
 */
function logTimeline(ctx: BenchContext, kind: PathKind, ats: readonly number[], resumedAt: number, open: readonly number[]): void {
  const bins = new Map<number, number>();
  for (const at of ats) {
    const bin = Math.floor((at - resumedAt) / 100);
    bins.set(bin, (bins.get(bin) ?? 0) + 1);
  }
  const replies = [...bins].sort((a, b) => a[0] - b[0]).map(([bin, n]) => `${bin}:${n}`);
  ctx.log(`  ${kind}: replies per 100 ms after the resume (BENCH_TIMELINE): ${replies.join(' ')}`);
  ctx.log(`  ${kind}: calls open at the agent every 250 ms: ${open.join(' ')}`);
}

/**
 * BENCH_HEAP: the workers' live heap (after a full GC) now, idle, and three quarters into the
 * first wave, when every slot's call is open at the agent; logs the difference per open call.
 * A steadier figure than RSS per in-flight call, whose peak moves with GC timing.
 */
async function liveHeapPerCall(ctx: BenchContext, path: GenericPath, workers: readonly Child[], delay: number): Promise<void> {
  const sum = async () => (await Promise.all(workers.map((w) => w.call<number>('liveHeap', undefined, 120_000)))).reduce((a, b) => a + b, 0);
  const idle = await sum();
  await sleep(delay * 0.75);
  const { open } = await ctx.services.call<{ open: number }>('agentOpen');
  const busy = await sum();
  ctx.log(
    `  ${path.kind}: live heap ${(idle / 2 ** 20).toFixed(1)} MB idle, ${(busy / 2 ** 20).toFixed(1)} MB with ${open} calls open: ` +
      `${((busy - idle) / 1024 / Math.max(1, open)).toFixed(1)} KB per call (BENCH_HEAP)`,
  );
}

/** Warms running workers with the fast agent, then measures them with the slow one. */
export async function slowRun(
  ctx: BenchContext,
  path: GenericPath,
  workers: readonly Child[],
  concurrency: number,
  waves: number,
  tag: string,
  delay: number = ctx.settings.slowDelayMs,
): Promise<SlowResult> {
  try {
    await warmUp(ctx, path, Math.min(2_000, workers.length * 500), `${tag}-warm`);
    await ctx.services.call('setDelay', delay);
    const r = await measureSlow(ctx, path, workers, workers.length * concurrency, waves, tag, delay);
    ctx.log(
      `  ${tag} ${path.kind}: ${workers.length}×c${concurrency}: ${Math.round(r.throughput)} msg/s (${r.idealPct.toFixed(1)}% of ideal), ` +
        (r.sustainedIdealPct === undefined ? '' : `sustained ${Math.round(r.sustained!)} msg/s (${r.sustainedIdealPct.toFixed(1)}%), `) +
        `${r.inFlight} calls in flight at the agent (peak ${r.inFlightPeak}; ${r.activeJobs} active jobs), RSS ${r.rssBaseMb.toFixed(0)}→${r.rssPeakMb.toFixed(0)} MB, ELD p99 ${r.eldP99Ms.toFixed(1)} ms, ${Math.round(r.cpuPerMessageUs)} µs CPU per message`,
    );
    return r;
  } finally {
    await ctx.services.call('setDelay', 0);
  }
}

/** Scenario 3: one worker process against a slow agent, at each (delay, concurrency) of the settings. */
export async function slowAgentScenario(ctx: BenchContext): Promise<ResultRow[]> {
  const s = ctx.settings;
  const rows: ResultRow[] = [];
  const paths: GenericPath[] = [];
  try {
    for (const kind of ['floor', 'bridge'] as const) paths.push(await openPath(ctx, kind, 's3'));
    for (const { delayMs, concurrency: c, waves, rssTargetMb } of s.slowRuns) {
      const r = {} as Record<PathKind, SlowResult>;
      const tag = `s3d${delayMs / 1000}c${c}`;
      try {
        // Both paths' workers start together; the idle one costs next to nothing meanwhile.
        const workers = await Promise.all(paths.map((p) => p.startWorkers(1, c, `${tag}-${p.kind}-worker`)));
        for (const [i, path] of paths.entries()) r[path.kind] = await slowRun(ctx, path, workers[i]!, c, waves, tag, delayMs);
      } finally {
        await Promise.all(paths.map((p) => p.stopWorkers()));
      }
      const name = `3 · slow agent ${delayMs / 1000} s, c=${c}`;
      const note = `${c * waves} messages (${waves} waves); counted at the agent emulator; median while jobs waited: bridge ${r.bridge.inFlight}, floor ${r.floor.inFlight}; BullMQ active jobs (median): bridge ${r.bridge.activeJobs}, floor ${r.floor.activeJobs}`;
      rows.push(row(`${name}: calls open at the agent, peak`, 'calls', r.bridge.inFlightPeak, r.floor.inFlightPeak, undefined, note, 0));
      rows.push(row(`${name}: throughput`, 'msg/s', r.bridge.throughput, r.floor.throughput, c >= 2_000 ? TARGETS.slowVsFloor : undefined, undefined, 0));
      // The target is a rate held (c / delay is a steady-state rate): it is judged once every slot
      // has answered once. The cold start, with the first wave's one-time ramp, is shown beside it.
      const heldTarget = c >= 2_000 && r.bridge.sustainedIdealPct !== undefined ? TARGETS.idealShare : undefined;
      rows.push(row(`${name}: share of ideal (c / ${delayMs / 1000} s), from a cold start`, '%', r.bridge.idealPct, r.floor.idealPct, heldTarget ? undefined : c >= 2_000 ? TARGETS.idealShare : undefined, 'resume → last reply: includes the ramp of the first wave (every slot fetched and every call opened at once)'));
      if (r.bridge.sustainedIdealPct !== undefined && r.floor.sustainedIdealPct !== undefined) {
        rows.push(row(`${name}: share of ideal (c / ${delayMs / 1000} s), held`, '%', r.bridge.sustainedIdealPct, r.floor.sustainedIdealPct, heldTarget, `once every slot has answered once: from reply number ${c} to the last (${waves - 1} full cycle${waves > 2 ? 's' : ''} of every slot)`));
      }
      rows.push(row(`${name}: worker RSS peak`, 'MB', r.bridge.rssPeakMb, r.floor.rssPeakMb, rssTargetMb ? rssUnder(rssTargetMb) : undefined, `idle after GC: bridge ${r.bridge.rssBaseMb.toFixed(0)} MB, floor ${r.floor.rssBaseMb.toFixed(0)} MB`, 0));
      rows.push(row(`${name}: RSS per in-flight conversation`, 'KB', r.bridge.rssPerInFlightKb, r.floor.rssPerInFlightKb, c >= 2_000 ? TARGETS.rssPerInFlight : undefined, '(RSS peak − idle) / peak calls open', 0));
      rows.push(row(`${name}: event-loop delay p99`, 'ms', r.bridge.eldP99Ms, r.floor.eldP99Ms));
      rows.push(row(`${name}: worker CPU per message`, 'µs', r.bridge.cpuPerMessageUs, r.floor.cpuPerMessageUs, undefined, undefined, 0));
    }
  } finally {
    await Promise.all(paths.map((p) => p.close()));
  }
  return rows;
}
