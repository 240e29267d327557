import { Agent } from 'node:http';
import { benchBridgeEnv, postSigned, slackAppEnv, withSlackEventsApp } from '../lib/slack-events.js';
import { percentiles, type Percentiles } from '../lib/stats.js';
import { processCpuMs, redisCpuMs } from '../lib/proc-cpu.js';
import type { SlackInfo } from '../procs/services-types.js';
import { row, TARGETS, type ResultRow } from '../report/rows.js';
import type { BenchContext } from './context.js';

const CHANNEL = 'C0GENERAL';
const bridgeEntry = new URL('../procs/bridge-app.ts', import.meta.url);
const peerEntry = new URL('../procs/slack-peer.ts', import.meta.url);
type Kind = 'bridge' | 'peer';

interface BurstResult {
  throughput: number;
  /** Event sent → reply stored. */
  endToEnd: Percentiles;
  /** Event sent → 200 acknowledgement. */
  ack: Percentiles;
  /** Replies that came back out of their thread's order. */
  outOfOrder: number;
  /** CPU per message (µs) during the measured burst: the app's process, the emulators' process, Redis. */
  cpu: { app: number; services: number; redis: number };
  /** Slack Web API calls per message during the measured burst, by method. */
  slackCalls: Record<string, number>;
}

type BurstThreads = Array<{ threadTs: string; bodies: string[] }>;

/**
 * Sends every body of `threads` with `senders` closed-loop senders (each sends its next event
 * once the previous was acknowledged) and returns when all are acknowledged.
 */
async function sendClosedLoop(
  url: URL,
  agent: Agent,
  secret: string,
  threads: BurstThreads,
  senders: number,
  label: string,
  onSent: (threadTs: string, at: number) => void = () => {},
  onAck: (ms: number) => void = () => {},
): Promise<void> {
  const perThread = Math.max(...threads.map((t) => t.bodies.length));
  await Promise.all(
    Array.from({ length: senders }, async (_, j) => {
      const own = threads.filter((_, t) => t % senders === j);
      for (let k = 0; k < perThread; k++) {
        for (const t of own) {
          const at = Date.now();
          onSent(t.threadTs, at);
          const status = await postSigned(url, agent, secret, t.bodies[k]!);
          onAck(Date.now() - at);
          if (status !== 200) throw new Error(`${label}: event answered ${status}`);
        }
      }
    }),
  );
}

/** The replies posted in `threads` since the last call, once `total` of them are in (60 s at most). */
async function repliesIn(ctx: BenchContext, threads: Set<string>, total: number, label: string): Promise<Array<{ threadTs: string; text: string; at: number }>> {
  const posts: Array<{ threadTs: string; text: string; at: number }> = [];
  const deadline = Date.now() + 60_000;
  while (posts.length < total) {
    posts.push(...(await ctx.services.call<typeof posts>('slackPosts')).filter((p) => threads.has(p.threadTs)));
    if (Date.now() > deadline) throw new Error(`${label}: ${posts.length} of ${total} replies within 60 s`);
    if (posts.length < total) await new Promise((r) => setTimeout(r, 50));
  }
  return posts;
}

/**
 * One burst: 1,000 signed app_mention events over 100 threads (10 each), 20 senders each
 * sending its next event once the previous was acknowledged; an instant agent; replies are
 * read where they land, in the Slack emulator. End to end = event sent → reply stored.
 *
 * Both sides first answer a warm-up burst (its own threads, its own connections, not
 * measured): a service runs for days, and a process minutes old has code V8 has not compiled
 * yet. The measured burst still opens its connections fresh.
 */
async function burst(ctx: BenchContext, kind: Kind, slack: SlackInfo): Promise<BurstResult> {
  const env = (prefix: string) => {
    const common = { ...slackAppEnv(ctx, slack, prefix), WORKER_CONCURRENCY: '50' };
    return kind === 'bridge' ? { ...common, ROLE: 'all', ...benchBridgeEnv(CHANNEL), ...ctx.settings.peerBridgeEnv } : common;
  };
  const entry = kind === 'bridge' ? bridgeEntry : peerEntry;
  return withSlackEventsApp(ctx, entry, { run: `s7-${kind}`, env }, async ({ url, agent, child }) => {
    const s = ctx.settings;
    const secret = slack.identity.signingSecret;
    if (s.peerWarmUpPerThread > 0) {
      const warm = await ctx.services.call<BurstThreads>('slackBurst', { channel: CHANNEL, threads: s.peerSenders, perThread: s.peerWarmUpPerThread, users: s.peerSenders });
      await ctx.services.call('slackPosts'); // forget earlier posts
      const warmAgent = new Agent({ keepAlive: true });
      try {
        await sendClosedLoop(url, warmAgent, secret, warm, s.peerSenders, `${kind} warm-up`);
      } finally {
        warmAgent.destroy();
      }
      await repliesIn(ctx, new Set(warm.map((t) => t.threadTs)), warm.length * s.peerWarmUpPerThread, `${kind} warm-up`);
    }
    const threads = await ctx.services.call<BurstThreads>('slackBurst', {
      channel: CHANNEL,
      threads: s.peerThreads,
      perThread: s.peerPerThread,
      users: s.peerSenders,
    });
    await ctx.services.call('slackPosts'); // forget earlier posts
    const total = s.peerThreads * s.peerPerThread;
    const sentAt = new Map<string, number[]>(threads.map((t) => [t.threadTs, []]));
    const acks: number[] = [];
    await ctx.services.call('slackCallCounts'); // forget the warm-up's
    const cpuBefore = await cpuNow(ctx, child.pid);
    const started = Date.now();
    await sendClosedLoop(
      url,
      agent,
      secret,
      threads,
      s.peerSenders,
      kind,
      (threadTs, at) => sentAt.get(threadTs)!.push(at),
      (ms) => acks.push(ms),
    );

    const posts = await repliesIn(ctx, new Set(sentAt.keys()), total, kind);
    const cpuAfter = await cpuNow(ctx, child.pid);
    // The working reaction's removal may still be on its way: give it a moment before counting.
    await new Promise((r) => setTimeout(r, 500));
    const calls = await ctx.services.call<Record<string, number>>('slackCallCounts');
    const perMessage = (k: keyof typeof cpuAfter) => Math.round(((cpuAfter[k] - cpuBefore[k]) * 1000) / total);
    const endToEnd: number[] = [];
    const seen = new Map<string, number>();
    let outOfOrder = 0;
    for (const p of posts) {
      const k = seen.get(p.threadTs) ?? 0;
      seen.set(p.threadTs, k + 1);
      endToEnd.push(p.at - sentAt.get(p.threadTs)![k]!);
      if (!p.text.includes(` q${k}`)) outOfOrder++;
    }
    const last = Math.max(...posts.map((p) => p.at));
    return {
      throughput: total / ((last - started) / 1000),
      endToEnd: percentiles(endToEnd),
      ack: percentiles(acks),
      outOfOrder,
      cpu: { app: perMessage('app'), services: perMessage('services'), redis: perMessage('redis') },
      slackCalls: Object.fromEntries(Object.entries(calls).map(([method, n]) => [method, Math.round((100 * n) / total) / 100])),
    };
  });
}

/** `chat.postMessage 1, reactions.add 1` (sorted by method). */
function describeCalls(calls: Record<string, number>): string {
  return Object.entries(calls).sort(([a], [b]) => a.localeCompare(b)).map(([m, n]) => `${m} ${n}`).join(', ') || 'none';
}

/** CPU used so far (ms) by the app's process, the services process and the Redis server. */
async function cpuNow(ctx: BenchContext, appPid: number): Promise<{ app: number; services: number; redis: number }> {
  return { app: await processCpuMs(appPid), services: await processCpuMs(ctx.services.pid), redis: await redisCpuMs(ctx.redis) };
}

/**
 * A side's median figures over its rounds, each taken on its own: a burst lasts seconds, so
 * one lucky or one disturbed round on the shared machine moves neither side's figure. Replies
 * out of order are the most of any round (that one must stay 0).
 */
function medianBurst(results: BurstResult[]): BurstResult {
  const middle = <T>(pick: (r: BurstResult) => T, key: (t: T) => number): T => {
    const sorted = results.map(pick).sort((a, b) => key(a) - key(b));
    return sorted[Math.floor((sorted.length - 1) / 2)]!;
  };
  return {
    throughput: middle((r) => r.throughput, (t) => t),
    endToEnd: middle((r) => r.endToEnd, (p) => p.p99),
    ack: middle((r) => r.ack, (p) => p.p99),
    outOfOrder: Math.max(...results.map((r) => r.outOfOrder)),
    cpu: middle((r) => r.cpu, (c) => c.app),
    slackCalls: results[0]!.slackCalls,
  };
}

/** Scenario 7: the bridge against a plain Bolt + BullMQ bot, same burst, same emulators, same run. */
export async function peerScenario(ctx: BenchContext): Promise<ResultRow[]> {
  const slack = await ctx.services.call<SlackInfo>('startSlack');
  const s = ctx.settings;
  const rounds: Record<Kind, BurstResult[]> = { peer: [], bridge: [] };
  // Alternating, the side that goes first changing each round: neither gets the warmer machine throughout.
  for (let round = 1; round <= s.peerRounds; round++) {
    for (const kind of round % 2 ? (['peer', 'bridge'] as const) : (['bridge', 'peer'] as const)) {
      const b = await burst(ctx, kind, slack);
      rounds[kind].push(b);
      ctx.log(
        `  s7 ${kind} round ${round}: ${Math.round(b.throughput)} msg/s, end-to-end p50 ${b.endToEnd.p50.toFixed(0)} p99 ${b.endToEnd.p99.toFixed(0)} ms, ` +
          `ack p50 ${b.ack.p50.toFixed(1)} p99 ${b.ack.p99.toFixed(1)} ms, ${b.outOfOrder} out of thread order; ` +
          `CPU per message: app ${b.cpu.app} µs, emulators ${b.cpu.services} µs, Redis ${b.cpu.redis} µs; ` +
          `Slack calls per message: ${describeCalls(b.slackCalls)}`,
      );
    }
  }
  const r = { peer: medianBurst(rounds.peer), bridge: medianBurst(rounds.bridge) };
  const aggregate = s.peerRounds > 1 ? `; each side's median of ${s.peerRounds} rounds` : '';
  const warmUp = s.peerWarmUpPerThread > 0 ? `, after an unmeasured warm-up of ${s.peerSenders * s.peerWarmUpPerThread}` : '';
  const note = `${s.peerThreads * s.peerPerThread} signed app_mention events${warmUp}, ${s.peerThreads} threads, ${s.peerSenders} closed-loop senders, instant agent; floor column = the plain Bolt + BullMQ peer${aggregate}`;
  const order = `replies out of thread order: bridge ${r.bridge.outOfOrder}, peer ${r.peer.outOfOrder}`;
  const cpu = (c: BurstResult['cpu']) => `app ${c.app}, emulators ${c.services}, Redis ${c.redis}`;
  const cpuNote =
    `CPU µs per message (the median round): bridge ${cpu(r.bridge.cpu)}; peer ${cpu(r.peer.cpu)}; ` +
    `Slack calls per message: bridge ${describeCalls(r.bridge.slackCalls)}; peer ${describeCalls(r.peer.slackCalls)}`;
  return [
    row('7 · burst vs plain-bot peer: throughput', 'msg/s', r.bridge.throughput, r.peer.throughput, TARGETS.peerThroughput, `${note}; ${cpuNote}`, 0),
    row('7 · burst vs plain-bot peer: end-to-end p99', 'ms', r.bridge.endToEnd.p99, r.peer.endToEnd.p99, TARGETS.peerEndToEndP99, `p50 bridge ${r.bridge.endToEnd.p50.toFixed(0)}, peer ${r.peer.endToEnd.p50.toFixed(0)} ms; ${order}`, 0),
    row('7 · burst vs plain-bot peer: ack p99', 'ms', r.bridge.ack.p99, r.peer.ack.p99, TARGETS.peerAckP99, `p50 bridge ${r.bridge.ack.p50.toFixed(1)}, peer ${r.peer.ack.p50.toFixed(1)} ms`, 1),
  ];
}

