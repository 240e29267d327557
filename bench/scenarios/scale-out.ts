import { row, TARGETS, type ResultRow } from '../report/rows.js';
import type { BenchContext } from './context.js';
import { openPath, type GenericPath, type PathKind } from './paths.js';
import { slowRun, type SlowResult } from './slow-agent.js';

/** Scenario 4: 1, 2 and 4 worker processes (concurrency 500 each) on the 2 s agent. */
export async function scaleOutScenario(ctx: BenchContext): Promise<ResultRow[]> {
  const s = ctx.settings;
  const rows: ResultRow[] = [];
  const results = new Map<number, Record<PathKind, SlowResult>>();
  const paths: GenericPath[] = [];
  try {
    for (const kind of ['floor', 'bridge'] as const) paths.push(await openPath(ctx, kind, 's4'));
    for (const n of s.scaleWorkers) {
      const r = {} as Record<PathKind, SlowResult>;
      for (const path of paths) r[path.kind] = await slowRun(ctx, path, n, s.scaleConcurrency, s.scaleWaves, `s4w${n}`);
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
  if (one && top) {
    rows.push(
      row(`4 · scale-out ${hi} workers ÷ ${lo} worker`, '×', top.bridge.throughput / one.bridge.throughput, top.floor.throughput / one.floor.throughput, TARGETS.scaleOut, undefined, 2),
    );
  }
  return rows;
}
