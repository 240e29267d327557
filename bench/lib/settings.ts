/**
 * Sizes of every scenario. `BENCH_QUICK=1` shrinks them to a smoke run of about a minute or
 * two; `BENCH_ONLY=1,3` (or names: `BENCH_ONLY=peer,slow`) runs some scenarios; `BENCH_PROFILE=1` writes CPU profiles of the
 * worker processes to bench/results/*.cpuprofile; `BENCH_SLOW=2000:2000:3,10000:5000:2` sets scenario 3's runs
 * (agent delay ms : concurrency : waves); `BENCH_SCALE_CONCURRENCY` sets scenario 4's
 * concurrency per worker (default 100); `REDIS_URL` picks another Redis. For same-hour A/B runs:
 * `BENCH_BRIDGE_ENV` (JSON) adds settings to scenario 7's bridge, `BENCH_WORKER_NODE_OPTIONS`
 * gives the bridge's worker processes of scenarios 1–4 their `NODE_OPTIONS`. `BENCH_HEAP=1` and
 * `BENCH_TIMELINE=1` add scenario 3's live heap per call and the shape of its waves to the log.
 */
export interface BenchSettings {
  quick: boolean;
  profile: boolean;
  only: ReadonlySet<number> | undefined;
  redisUrl: string;
  /** Scenario 1: messages drained for warm-up, then measured. */
  warmupMessages: number;
  throughputMessages: number;
  /** Best of this many alternating bridge/floor runs (the machine is shared). */
  throughputRounds: number;
  /** Scenario 2. */
  latencyRates: number[];
  latencyWarmupMs: number;
  latencyMeasureMs: number;
  /** Best (lowest p99) of this many alternating bridge/floor rounds per rate. */
  latencyRounds: number;
  /** Scenario 4's agent delay (ms). */
  slowDelayMs: number;
  /** Scenario 3: one worker at each of these agent delays and concurrencies. */
  slowRuns: Array<{ delayMs: number; concurrency: number; waves: number; rssTargetMb?: number }>;
  scaleWorkers: number[];
  scaleConcurrency: number;
  scaleWaves: number;
  /** Scenario 5. */
  slackRate: number;
  slackWarmupMs: number;
  slackMeasureMs: number;
  /** Scenario 6: how long the process idles before RSS is read. */
  idleSettleMs: number;
  /** Scenario 7: the burst of signed app_mention events against the plain Bolt + BullMQ peer. */
  peerThreads: number;
  peerPerThread: number;
  peerSenders: number;
  /** Events per sender's thread in the unmeasured warm-up burst before each measured one (0: none). */
  peerWarmUpPerThread: number;
  /** Bursts per side; each figure is the side's median round. */
  peerRounds: number;
  /** Settings scenario 7's bridge runs with on top of the bench's (`BENCH_BRIDGE_ENV`, JSON). */
  peerBridgeEnv: Record<string, string>;
  /** `NODE_OPTIONS` of the bridge's worker processes (`BENCH_WORKER_NODE_OPTIONS`); unset: none. */
  workerNodeOptions: string | undefined;
  /**
   * `BENCH_HEAP=1`: scenario 3 also reads each worker's live heap (after a full GC) idle and
   * three quarters into the first wave, and logs the live heap per call in flight. The GC it
   * forces mid-wave costs both paths a pause, so throughput rows of such a run are not comparable.
   */
  heap: boolean;
  /**
   * `BENCH_TIMELINE=1`: scenario 3 also logs each run's replies per 100 ms from the resume and
   * the calls open at the agent every 250 ms: the shape of the waves, which is where its share
   * of ideal goes (docs/benchmark.md).
   */
  timeline: boolean;
}

/** Scenario numbers and the names BENCH_ONLY also accepts. */
export const SCENARIO_NAMES: Record<string, number> = { throughput: 1, latency: 2, slow: 3, scale: 4, ack: 5, idle: 6, peer: 7 };

export function benchSettings(env: NodeJS.ProcessEnv = process.env): BenchSettings {
  const quick = ['1', 'true', 'yes'].includes((env.BENCH_QUICK ?? '').toLowerCase());
  const only = env.BENCH_ONLY
    ? new Set(
        env.BENCH_ONLY.split(',')
          .map((s) => SCENARIO_NAMES[s.trim().toLowerCase()] ?? Number(s.trim()))
          .filter((n) => Number.isInteger(n) && n >= 1 && n <= 7),
      )
    : undefined;
  return {
    quick,
    profile: ['1', 'true', 'yes'].includes((env.BENCH_PROFILE ?? '').toLowerCase()),
    only,
    redisUrl: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    warmupMessages: quick ? 500 : 3_000,
    throughputMessages: quick ? 2_000 : 10_000,
    throughputRounds: quick ? 1 : 3,
    latencyRates: [200, 1_000],
    latencyWarmupMs: quick ? 1_000 : 3_000,
    latencyMeasureMs: quick ? 2_000 : 10_000,
    latencyRounds: quick ? 1 : 2,
    slowDelayMs: 2_000,
    // Waves kept low so the whole run fits in 10 minutes: 2,000 × 3 × 2 s and 5,000 × 2 × 10 s.
    slowRuns: slowRunsFrom(env.BENCH_SLOW) ?? (quick
      ? [
          { delayMs: 2_000, concurrency: 500, waves: 1 },
          { delayMs: 2_000, concurrency: 2_000, waves: 1 },
        ]
      : [
          { delayMs: 2_000, concurrency: 2_000, waves: 3 },
          { delayMs: 10_000, concurrency: 5_000, waves: 2, rssTargetMb: 1_024 },
        ]),
    scaleWorkers: [1, 2, 4],
    // Four workers at the ideal rate must fit in two cores, or the run measures CPU, not
    // scale-out (scenario 3 at concurrency 2,000 covers that regime); override to compare.
    scaleConcurrency: positiveInt(env.BENCH_SCALE_CONCURRENCY, 100),
    scaleWaves: quick ? 1 : 4,
    slackRate: 200,
    slackWarmupMs: quick ? 1_000 : 3_000,
    slackMeasureMs: quick ? 2_000 : 10_000,
    idleSettleMs: quick ? 2_000 : 5_000,
    peerThreads: 100,
    peerPerThread: 10,
    peerSenders: 20,
    peerWarmUpPerThread: 10,
    peerRounds: quick ? 1 : 3,
    peerBridgeEnv: env.BENCH_BRIDGE_ENV ? (JSON.parse(env.BENCH_BRIDGE_ENV) as Record<string, string>) : {},
    workerNodeOptions: env.BENCH_WORKER_NODE_OPTIONS || undefined,
    heap: flag(env.BENCH_HEAP),
    timeline: flag(env.BENCH_TIMELINE),
  };
}

/** An on/off setting: `1`, `true` or `yes` is on. */
function flag(raw: string | undefined): boolean {
  return ['1', 'true', 'yes'].includes((raw ?? '').toLowerCase());
}

/** `BENCH_SLOW=2000:2000:3,10000:5000:2`: scenario 3's runs as delay ms : concurrency : waves. */
function slowRunsFrom(raw: string | undefined): BenchSettings['slowRuns'] | undefined {
  if (!raw) return undefined;
  const runs = raw.split(',').map((part) => {
    const [delayMs, concurrency, waves] = part.split(':').map((n) => positiveInt(n.trim(), 0));
    if (!delayMs || !concurrency || !waves) throw new Error(`BENCH_SLOW: "${part}" is not delayMs:concurrency:waves`);
    return { delayMs, concurrency, waves, ...(delayMs >= 10_000 ? { rssTargetMb: 1_024 } : {}) };
  });
  return runs;
}

function positiveInt(raw: string | undefined, fallback: number): number {
  const n = Number(raw);
  return raw && Number.isInteger(n) && n > 0 ? n : fallback;
}
