/**
 * `npm run bench`: every scenario of issues 7 and 15, the bridge next to the bare-BullMQ floor
 * (and, in scenario 7, a plain Bolt + BullMQ bot) in the same run, on this machine's Redis.
 * Prints a Markdown table and writes bench/results/. See docs/benchmark.md.
 * Env: BENCH_QUICK=1, BENCH_ONLY=1,3 or BENCH_ONLY=peer,slow, BENCH_PROFILE=1, REDIS_URL.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { Child, killAll } from './lib/children.js';
import { deleteKeys } from './lib/redis-admin.js';
import { benchSettings } from './lib/settings.js';
import type { ServicesInfo } from './procs/services-types.js';
import { latencyChart } from './report/chart.js';
import { cpuTicks, finishMachineInfo, machineInfo } from './report/machine.js';
import { resultsDocument, resultsTable } from './report/markdown.js';
import { failedRow, type ResultRow } from './report/rows.js';
import type { BenchContext } from './scenarios/context.js';
import { idleRssScenario } from './scenarios/idle-rss.js';
import { peerScenario } from './scenarios/peer.js';
import { latencyScenario, type LatencyResult } from './scenarios/latency.js';
import type { PathKind } from './scenarios/paths.js';
import { scaleOutScenario } from './scenarios/scale-out.js';
import { slackAckScenario } from './scenarios/slack-ack.js';
import { slowAgentScenario } from './scenarios/slow-agent.js';
import { throughputScenario } from './scenarios/throughput.js';

const settings = benchSettings();
const runId = `bench-${randomBytes(3).toString('hex')}`;
const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
const started = Date.now();
const log = (line: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);

const redis = new Redis(settings.redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
let services: Child<ServicesInfo> | undefined;

let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await services?.stop(5_000).catch(() => undefined);
    await killAll();
    if (redis.status === 'ready') {
      await deleteKeys(redis, runId).catch(() => undefined);
      await redis.quit().catch(() => undefined);
    } else redis.disconnect();
  })();
  return cleaning;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping every bench process`);
    void cleanup().finally(() => process.exit(130));
  });
}
// The whole run is bounded: a hung scenario must not keep the machine busy.
const watchdog = setTimeout(
  () => {
    log('the run took too long; stopping every bench process');
    void cleanup().finally(() => process.exit(1));
  },
  (settings.quick ? 8 : 25) * 60_000,
);
watchdog.unref();

async function main(): Promise<number> {
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    console.error(`Redis is not reachable at ${settings.redisUrl} (${(err as Error).message}): start it or set REDIS_URL`);
    return 1;
  }
  const machine = await machineInfo(redis, settings.quick);
  const ticksAtStart = cpuTicks();
  log(`agent-bridge benchmark (${machine.mode}, run ${runId}) on ${machine.cores} cores, Node ${machine.node}, Redis ${machine.redis}; load average ${machine.loadAverageAtStart.join(' ')}`);

  services = await Child.spawn<ServicesInfo>(new URL('./procs/services.ts', import.meta.url), { label: 'services', env: {}, profile: settings.profile });
  const ctx: BenchContext = { settings, runId, services, servicesOffset: await services.clockOffset(), redis, log };
  log(`services up (agent emulator + sink, pid ${services.pid}); clock offset ${ctx.servicesOffset.toFixed(3)} ms`);

  const rows: ResultRow[] = [];
  let latency: Record<PathKind, LatencyResult[]> | undefined;
  let failures = 0;
  const scenarios: Array<[number, string, () => Promise<ResultRow[]>]> = [
    [1, 'maximum throughput', () => throughputScenario(ctx)],
    [2, 'latency at fixed rates', async () => {
      const r = await latencyScenario(ctx);
      latency = r.results;
      return r.rows;
    }],
    [3, 'slow agent', () => slowAgentScenario(ctx)],
    [4, 'scale-out', () => scaleOutScenario(ctx)],
    [5, 'Slack HTTP events', () => slackAckScenario(ctx)],
    [6, 'idle RSS', () => idleRssScenario(ctx)],
    [7, 'burst vs the plain Bolt + BullMQ peer', () => peerScenario(ctx)],
  ];
  for (const [n, name, run] of scenarios) {
    if (settings.only && !settings.only.has(n)) continue;
    log(`scenario ${n}: ${name}`);
    try {
      rows.push(...(await run()));
    } catch (err) {
      failures++;
      log(`scenario ${n} failed: ${(err as Error).stack ?? String(err)}`);
      rows.push(failedRow(`${n} · ${name}`, err));
      await ctx.services.call('setDelay', 0).catch(() => undefined);
    }
  }

  finishMachineInfo(machine, ticksAtStart);
  const date = new Date().toISOString();
  const base = settings.only ? 'partial' : settings.quick ? 'latest-quick' : 'latest';
  const chartFile = `${base}-latency.svg`;
  await mkdir(resultsDir, { recursive: true });
  if (latency) {
    const l = latency;
    const points = (kind: PathKind, key: 'p50' | 'p99') => l[kind].map((r) => ({ x: r.rate, y: r[key] }));
    const svg = latencyChart(`Ingress → reply posted, 1 worker, concurrency 50 (${date.slice(0, 10)})`, [
      { label: 'bridge p50', color: '#1f6feb', points: points('bridge', 'p50') },
      { label: 'bridge p99', color: '#1f6feb', dashed: true, points: points('bridge', 'p99') },
      { label: 'floor p50', color: '#8b949e', points: points('floor', 'p50') },
      { label: 'floor p99', color: '#8b949e', dashed: true, points: points('floor', 'p99') },
    ]);
    await writeFile(`${resultsDir}${chartFile}`, svg);
  }
  const json = { machine, date, runId, durationSeconds: Math.round((Date.now() - started) / 1000), scenarios: rows };
  await writeFile(`${resultsDir}${base}.json`, `${JSON.stringify(json, null, 2)}\n`);
  await writeFile(`${resultsDir}${base}.md`, resultsDocument(machine, date, rows, latency ? chartFile : '(no latency run)'));

  console.log(`\n${resultsTable(rows)}\n`);
  const missed = rows.filter((r) => r.met === false).map((r) => r.name);
  log(`wrote bench/results/${base}.json, ${base}.md${latency ? ` and ${chartFile}` : ''}`);
  log(missed.length ? `targets missed: ${missed.join('; ')}` : 'every target met');
  log(`machine CPU in use during the run (all processes, not only the bench): ${machine.cpuBusyPercent ?? '?'}%; load average at the end ${machine.loadAverageAtEnd?.join(' ')}`);
  return failures > 0 ? 1 : 0;
}

let code = 1;
try {
  code = await main();
} catch (err) {
  console.error(err);
} finally {
  await cleanup();
}
log(`done in ${Math.round((Date.now() - started) / 1000)} s`);
process.exit(code);
