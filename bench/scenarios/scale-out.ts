import type { Child } from '../lib/children.js';
import { row, TARGETS, type ResultRow } from '../report/rows.js';
import type { BenchContext } from './context.js';
import { openPath, type GenericPath, type PathKind } from './paths.js';
import { slowRun, type SlowResult } from './slow-agent.js';

/**
 * Scenario 4: 1, 2 and 4 worker processes on the 2 s agent. Each path's pool grows between
 * steps (1 → 2 → 4), so no process is started twice.
 */
export async function scaleOutScenario(ctx: BenchContext): Promise<ResultRow[]> {
  const s = ctx.settings;
  const rows: ResultRow[] = [];
  const results = new Map<number, Record<PathKind, SlowResult>>();
  const paths: GenericPath[] = [];
  try {
    for (const kind of ['floor', 'bridge'] as const) paths.push(await openPath(ctx, kind, 's4'));
    const pools = new Map<GenericPath, Child[]>(paths.map((p) => [p, []]));
    for (const n of [...s.scaleWorkers].sort((a, b) => a - b)) {
      const r = {} as Record<PathKind, SlowResult>;
      for (const path of paths) {
        const running = pools.get(path)!.length;
        if (n > running) pools.set(path, [...(await path.startWorkers(n - running, s.scaleConcurrency, `s4-${path.kind}-worker`))]);
        r[path.kind] = await slowRun(ctx, path, pools.get(path)!, s.scaleConcurrency, s.scaleWaves, `s4w${n}`);
      }
      results.set(n, r);
      const ideal = (n * s.scaleConcurrency) / (s.slowDelayMs / 1000);
      rows.push(
        row(`4 · scale-out ${n} worker${n > 1 ? 's' : ''} × c=${s.scaleConcurrency}`, 'msg/s', r.bridge.throughput, r.floor.throughput, undefined,
          `ideal ${ideal} msg/s; bridge ${r.bridge.idealPct.toFixed(0)}%, floor ${r.floor.idealPct.toFixed(0)}%`, 0),
      );
    }
  } finally {
    await Promise.all(paths.map((p) => p.close()));
  }
  const lo = Math.min(...s.scaleWorkers);
  const hi = Math.max(...s.scaleWorkers);
  const one = results.get(lo);
  const top = results.get(hi);
  if (one && top && hi > lo) {
    // The target is for 4 workers against 1.
    const target = hi === 4 && lo === 1 ? TARGETS.scaleOut : undefined;
    rows.push(
      row(`4 · scale-out ${hi} workers ÷ ${lo} worker`, '×', top.bridge.throughput / one.bridge.throughput, top.floor.throughput / one.floor.throughput, target, undefined, 2),
    );
  }
  return rows;
}
