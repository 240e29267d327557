import { now } from '../lib/clock.js';
import type { Child } from '../lib/children.js';
import { max } from '../lib/stats.js';
import type { ProbeReading } from '../procs/probe.js';
import { row, TARGETS, type ResultRow } from '../report/rows.js';
import { collectPosts, waitForPosts, type BenchContext } from './context.js';
import { sendMany, warmUp } from './drive.js';
import { floorPath, openPath, type GenericPath } from './paths.js';

/** Scenario 1's paths: the bridge, the floor, and the floor with the bridge's answer record. */
type DrainPath = 'bridge' | 'floor' | 'floor+record';

export interface DrainResult {
  /** Replies per second from the moment the queue was resumed to the last reply. */
  rate: number;
  /** Messages per second handed to the paused queue (the ingress alone). */
  enqueueRate: number;
  /** Worker CPU time per message (µs): steadier than throughput on a busy machine. */
  cpuPerMessageUs: number;
  /** CPU time of the driver (where the ingress runs) per message while enqueuing (µs). */
  ingressCpuPerMessageUs: number;
}

/**
 * Queues `count` messages (one conversation each) on the paused queue, resumes it and times
 * the worker from then until the last reply reaches the sink.
 */
export async function measureDrain(
  ctx: BenchContext,
  path: GenericPath,
  workers: readonly Child[],
  count: number,
  tag: string,
): Promise<DrainResult> {
  await path.pause();
  const cpuBefore = process.cpuUsage();
  const enqueueRate = await sendMany(count, 64, (i) => path.send(`${tag}-${i}`, `${tag}-${i}`, `question ${i}`));
  const ingressCpu = process.cpuUsage(cpuBefore);
  await collectPosts(ctx);
  await Promise.all(workers.map((w) => w.call('probeStart')));
  const resumedAt = now();
  await path.resume();
  await waitForPosts(ctx, count, 60_000 + count * 2);
  const readings = await Promise.all(workers.map((w) => w.call<ProbeReading>('probeRead')));
  const posts = await collectPosts(ctx);
  if (posts.byId.size !== count) throw new Error(`${path.kind}: ${posts.byId.size} distinct replies for ${count} messages`);
  const cpuMs = readings.reduce((sum, r) => sum + r.cpuMs, 0);
  return { rate: count / ((max(posts.ats) - resumedAt) / 1000), enqueueRate, cpuPerMessageUs: (cpuMs * 1000) / count,
    ingressCpuPerMessageUs: (ingressCpu.user + ingressCpu.system) / count,
  };
}

/** Scenario 1: maximum throughput of one worker process at concurrency 50, fast agent. */
export async function throughputScenario(ctx: BenchContext): Promise<ResultRow[]> {
  const s = ctx.settings;
  const none = { rate: 0, enqueueRate: 0, cpuPerMessageUs: Number.POSITIVE_INFINITY, ingressCpuPerMessageUs: Number.POSITIVE_INFINITY };
  const best: Record<DrainPath, DrainResult> = { bridge: { ...none }, floor: { ...none }, 'floor+record': { ...none } };
  const paths: Array<{ name: DrainPath; path: GenericPath; workers: Child[] }> = [];
  try {
    for (const kind of ['floor', 'bridge'] as const) paths.push({ name: kind, path: await openPath(ctx, kind, 's1'), workers: [] });
    paths.push({ name: 'floor+record', path: await floorPath(ctx, 's1', { record: true }), workers: [] });
    const workerLabel = (name: DrainPath) => `s1-${name.replace('+', '-')}-worker`;
    await Promise.all(paths.map(async (p) => (p.workers = await p.path.startWorkers(1, 50, workerLabel(p.name)))));
    for (const { path } of paths) await warmUp(ctx, path, s.warmupMessages, 'warm');
    for (let round = 1; round <= s.throughputRounds; round++) {
      for (const { name, path, workers } of paths) {
        const r = await measureDrain(ctx, path, workers, s.throughputMessages, `r${round}`);
        ctx.log(
          `  s1 ${name} round ${round}: ${Math.round(r.rate)} msg/s drained (${Math.round(r.cpuPerMessageUs)} µs worker CPU per message), ` +
            `${Math.round(r.enqueueRate)} msg/s enqueued (${Math.round(r.ingressCpuPerMessageUs)} µs ingress CPU per message)`,
        );
        const b = best[name];
        best[name] = {
          rate: Math.max(b.rate, r.rate),
          enqueueRate: Math.max(b.enqueueRate, r.enqueueRate),
          cpuPerMessageUs: Math.min(b.cpuPerMessageUs, r.cpuPerMessageUs),
          ingressCpuPerMessageUs: Math.min(b.ingressCpuPerMessageUs, r.ingressCpuPerMessageUs),
        };
      }
    }
  } finally {
    await Promise.all(paths.map((p) => p.path.close()));
  }
  const note = `${s.throughputMessages} messages, 1 per conversation; best of ${s.throughputRounds}`;
  return [
    row('1 · throughput, 1 worker process, concurrency 50', 'msg/s', best.bridge.rate, best.floor.rate, TARGETS.throughput, note, 0),
    row('1 · worker CPU per message', 'µs', best.bridge.cpuPerMessageUs, best.floor.cpuPerMessageUs, undefined, 'user + system time of the worker process ÷ messages; lower is better', 0),
    row('1 · throughput against a floor that records each answer', 'msg/s', best.bridge.rate, best['floor+record'].rate, undefined,
      "the floor plus one fenced script per answer before its post (bench/procs/floor-record.ts): the exactly-once step's own cost", 0),
    row('1 · worker CPU per message, same comparison', 'µs', best.bridge.cpuPerMessageUs, best['floor+record'].cpuPerMessageUs, undefined, 'lower is better', 0),
    row('1 · ingress enqueue rate (64 concurrent sends)', 'msg/s', best.bridge.enqueueRate, best.floor.enqueueRate, undefined, 'ingress.handle vs Queue.add, queue paused', 0),
    row('1 · ingress CPU per message', 'µs', best.bridge.ingressCpuPerMessageUs, best.floor.ingressCpuPerMessageUs, undefined, 'CPU time of the process running the ingress ÷ messages', 0),
  ];
}
