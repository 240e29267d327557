/** Nearest-rank percentile of unsorted values (p in 0..100); NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export const median = (values: readonly number[]): number => percentile(values, 50);

/** The median and the tail of one set of timings (ms). */
export interface Percentiles {
  p50: number;
  p99: number;
}

/** p50 and p99 of unsorted values; NaN when empty. */
export const percentiles = (values: readonly number[]): Percentiles => ({ p50: percentile(values, 50), p99: percentile(values, 99) });

export function max(values: readonly number[]): number {
  let m = Number.NEGATIVE_INFINITY;
  for (const v of values) if (v > m) m = v;
  return m;
}

/** Rounds to `digits` decimals; keeps null and NaN as null. */
export function round(value: number | null | undefined, digits = 1): number | null {
  if (value === null || value === undefined || !Number.isFinite(value)) return null;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
