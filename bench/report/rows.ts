import { round } from '../lib/stats.js';

/** One line of the results: a figure of the bridge next to the floor's. */
export interface ResultRow {
  /** Scenario number and what is measured, e.g. "2 · p99 latency at 1000/s". */
  name: string;
  unit: string;
  bridge: number | null;
  floor: number | null;
  /** bridge / floor. */
  ratio: number | null;
  /** The target in words, or "—" for a figure reported without one. */
  target: string;
  /** Whether the target is met; null when there is none or a figure is missing. */
  met: boolean | null;
  note?: string;
}

export interface Target {
  target: string;
  met: (bridge: number, floor: number) => boolean;
}

export function row(
  name: string,
  unit: string,
  bridge: number | null | undefined,
  floor: number | null | undefined,
  target?: Target,
  note?: string,
  digits = 1,
): ResultRow {
  const b = round(bridge, digits);
  const f = round(floor, digits);
  const ratio = b !== null && f !== null && f !== 0 ? round(b / f, 2) : null;
  return {
    name,
    unit,
    bridge: b,
    floor: f,
    ratio,
    target: target?.target ?? '—',
    met: target && b !== null && f !== null ? target.met(b, f) : null,
    ...(note ? { note } : {}),
  };
}

/** A scenario that could not run: its rows say so instead of disappearing. */
export function failedRow(name: string, err: unknown): ResultRow {
  const message = err instanceof Error ? err.message : String(err);
  return { name, unit: '', bridge: null, floor: null, ratio: null, target: '—', met: false, note: `failed: ${message.slice(0, 300)}` };
}

/** The targets of issue 15 (performance). */
export const TARGETS = {
  throughput: { target: '≥ 0.85× floor', met: (b, f) => b >= 0.85 * f },
  p99: { target: '≤ 1.3× floor and ≤ floor + 5 ms', met: (b, f) => b <= 1.3 * f && b <= f + 5 },
  idealShare: { target: '≥ 90% of ideal', met: (b) => b >= 90 },
  slowVsFloor: { target: '≥ 0.95× floor (uncapped pool)', met: (b, f) => b >= 0.95 * f },
  rssPerInFlight: { target: '≤ 1.3× floor', met: (b, f) => b <= 1.3 * f },
  scaleOut: { target: '≥ 3.7×', met: (b) => b >= 3.7 },
  slackAck: { target: '≤ 50 ms', met: (b) => b <= 50 },
  peerThroughput: { target: '≥ 1.1× peer', met: (b, f) => b >= 1.1 * f },
  peerEndToEndP99: { target: '≤ 0.9× peer', met: (b, f) => b <= 0.9 * f },
  peerAckP99: { target: '≤ 1.0× peer', met: (b, f) => b <= f },
} satisfies Record<string, Target>;

/** A bound on the bridge's own figure, e.g. worker RSS under 1 GB. */
export function rssUnder(mb: number): Target {
  return { target: `≤ ${mb} MB`, met: (b) => b <= mb };
}
