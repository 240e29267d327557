import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Child } from '../lib/children.js';
import { now } from '../lib/clock.js';
import { percentile } from '../lib/stats.js';
import type { ProbeReading } from '../procs/probe.js';
import { row, TARGETS, type ResultRow } from '../report/rows.js';
import { collectPosts, waitForPosts, type BenchContext } from './context.js';
import { openLoop, warmUp } from './drive.js';
import { openPath, type GenericPath, type PathKind } from './paths.js';

export interface LatencyResult {
  rate: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  measured: number;
  /** Most the sender fell behind its schedule (ms). */
  senderLagMs: number;
  /** Replies per second over the measured window: below `rate` means a backlog built up. */
  answeredRate: number;
  /** Time the ingress call took (due → queued), p50 and p99 (ms). */
  enqueueP50: number;
  enqueueP99: number;
  /** Event-loop delay p99 of the worker process and of the driver (where the ingress runs), ms. */
  workerEldP99: number;
  driverEldP99: number;
  /**
   * Medians over the last (up to 100) messages, from the agent emulator's call log (ms
   * resolution): queued → the agent call arrived, and the agent call → the reply at the sink.
   */
  stages?: { toAgentMs: number; agentToReplyMs: number; count: number };
}

/**
 * Open-loop arrivals at `rate` for warm-up + measurement; latency of a measured message is
 * the time from when it was due to be sent to when its reply reached the sink.
 */
export async function measureLatency(
  ctx: BenchContext,
  path: GenericPath,
  workers: readonly Child[],
  rate: number,
  tag: string,
): Promise<LatencyResult> {
  const s = ctx.settings;
  const warmCount = Math.round((rate * s.latencyWarmupMs) / 1000);
  const due = new Map<string, number>();
  const queuedAt = new Map<number, number>();
  const enqueued: number[] = [];
  const eld = monitorEventLoopDelay({ resolution: 10 });
  await collectPosts(ctx);
  let probing: Promise<unknown> | undefined;
  const run = await openLoop(rate, s.latencyWarmupMs + s.latencyMeasureMs, async (i, dueAt) => {
    const id = `${tag}-${i}`;
    if (i === warmCount) {
      eld.enable();
      // Not awaited, and without the probe's full GC: message i is due now, and neither the
      // IPC round trip nor a forced collection in the worker belongs in its latency.
      probing = Promise.all(workers.map((w) => w.call('probeStart', { collect: false })));
    }
    if (i >= warmCount) due.set(id, dueAt);
    await path.send(id, id, `question ${i}`);
    if (i >= warmCount) {
      enqueued.push(now() - dueAt);
      queuedAt.set(i, now());
    }
  });
  eld.disable();
  await probing;
  if (run.failed > 0) throw new Error(`${path.kind}: ${run.failed} sends failed at ${rate}/s (${run.firstError})`);
  await waitForPosts(ctx, run.sent, 60_000);
  const readings = await Promise.all(workers.map((w) => w.call<ProbeReading>('probeRead')));
  const calls = await ctx.services.call<Array<{ message: string; at: number }>>('agentCalls');
  const posts = await collectPosts(ctx);
  const latencies: number[] = [];
  let firstDue = Number.POSITIVE_INFINITY;
  let lastReply = 0;
  for (const [id, dueAt] of due) {
    const at = posts.byId.get(id);
    if (at === undefined) throw new Error(`${path.kind}: no reply for ${id}`);
    latencies.push(at - dueAt);
    firstDue = Math.min(firstDue, dueAt);
    lastReply = Math.max(lastReply, at);
  }
  return {
    rate,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
    max: percentile(latencies, 100),
    measured: latencies.length,
    senderLagMs: run.maxLagMs,
    answeredRate: latencies.length / ((lastReply - firstDue) / 1000),
    enqueueP50: percentile(enqueued, 50),
    enqueueP99: percentile(enqueued, 99),
    workerEldP99: Math.max(...readings.map((r) => r.eldP99Ms)),
    driverEldP99: eld.percentile(99) / 1e6,
    stages: stageMedians(calls, queuedAt, (i) => posts.byId.get(`${tag}-${i}`), ctx.servicesOffset),
  };
}

/** Where the time goes, for the messages the agent emulator still remembers. */
function stageMedians(
  calls: Array<{ message: string; at: number }>,
  queuedAt: Map<number, number>,
  replyAt: (i: number) => number | undefined,
  offset: number,
): LatencyResult['stages'] {
  const toAgent: number[] = [];
  const agentToReply: number[] = [];
  for (const call of calls) {
    const i = Number(/^question (\d+)$/.exec(call.message)?.[1] ?? NaN);
    const queued = queuedAt.get(i);
    const reply = replyAt(i);
    if (queued === undefined || reply === undefined) continue;
    toAgent.push(call.at - offset - queued);
    agentToReply.push(reply - (call.at - offset));
  }
  if (toAgent.length === 0) return undefined;
  return { toAgentMs: percentile(toAgent, 50), agentToReplyMs: percentile(agentToReply, 50), count: toAgent.length };
}

/** Scenario 2: ingress → reply posted at fixed rates, one worker process at concurrency 50. */
export async function latencyScenario(ctx: BenchContext): Promise<{ rows: ResultRow[]; results: Record<PathKind, LatencyResult[]> }> {
  const s = ctx.settings;
  const results: Record<PathKind, LatencyResult[]> = { bridge: [], floor: [] };
  const paths: Array<{ path: GenericPath; workers: Child[] }> = [];
  try {
    for (const kind of ['floor', 'bridge'] as const) paths.push({ path: await openPath(ctx, kind, 's2'), workers: [] });
    await Promise.all(paths.map(async (p) => (p.workers = await p.path.startWorkers(1, 50, `s2-${p.path.kind}-worker`))));
    for (const { path } of paths) await warmUp(ctx, path, s.warmupMessages, 'warm');
    for (const rate of s.latencyRates) {
      const best: Partial<Record<PathKind, LatencyResult>> = {};
      for (let round = 1; round <= s.latencyRounds; round++) {
        for (const { path, workers } of paths) {
          const r = await measureLatency(ctx, path, workers, rate, `r${rate}-${round}`);
          ctx.log(
            `  s2 ${path.kind} ${rate}/s round ${round}: p50 ${r.p50.toFixed(2)} p95 ${r.p95.toFixed(2)} p99 ${r.p99.toFixed(2)} ms; ` +
              `enqueue p50 ${r.enqueueP50.toFixed(2)} p99 ${r.enqueueP99.toFixed(2)} ms; event-loop delay p99 worker ${r.workerEldP99.toFixed(1)}, ` +
              `driver ${r.driverEldP99.toFixed(1)} ms; sender lag ≤ ${r.senderLagMs.toFixed(1)} ms` +
              (r.stages
                ? `; last ${r.stages.count} medians: queued → agent call ${r.stages.toAgentMs.toFixed(1)} ms, agent call → reply ${r.stages.agentToReplyMs.toFixed(1)} ms`
                : ''),
          );
          const b = best[path.kind];
          if (!b || r.p99 < b.p99) best[path.kind] = r;
        }
      }
      results.bridge.push(best.bridge!);
      results.floor.push(best.floor!);
    }
  } finally {
    await Promise.all(paths.map((p) => p.path.close()));
  }
  const rows: ResultRow[] = [];
  s.latencyRates.forEach((rate, i) => {
    const b = results.bridge[i]!;
    const f = results.floor[i]!;
    const behind = [b, f].filter((r) => r.answeredRate < 0.95 * rate);
    const note =
      `${b.measured} messages after ${s.latencyWarmupMs / 1000} s warm-up, best of ${s.latencyRounds}` +
      (behind.length
        ? `; above capacity, replies/s: bridge ${Math.round(b.answeredRate)}, floor ${Math.round(f.answeredRate)} (a backlog grew, p99 measures it)`
        : '');
    rows.push(row(`2 · latency p50 at ${rate}/s`, 'ms', b.p50, f.p50, undefined, undefined, 2));
    rows.push(row(`2 · latency p95 at ${rate}/s`, 'ms', b.p95, f.p95, undefined, undefined, 2));
    rows.push(row(`2 · latency p99 at ${rate}/s`, 'ms', b.p99, f.p99, TARGETS.p99, note, 2));
  });
  return { rows, results };
}
