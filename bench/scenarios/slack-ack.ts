import { Queue } from 'bullmq';
import { eventEnvelope, userMessage } from '../../test/emulators/slack/payloads.js';
import { SlackState } from '../../test/emulators/slack/state.js';
import { benchBridgeEnv, postSigned, slackAppEnv, withSlackEventsApp } from '../lib/slack-events.js';
import { now } from '../lib/clock.js';
import { processCpuMs } from '../lib/proc-cpu.js';
import { percentile, percentiles, type Percentiles } from '../lib/stats.js';
import type { SlackInfo } from '../procs/services-types.js';
import { row, TARGETS, type ResultRow } from '../report/rows.js';
import type { BenchContext } from './context.js';
import { openLoop } from './drive.js';
import type { PathKind } from './paths.js';

const CHANNEL = 'C0GENERAL';
const bridgeEntry = new URL('../procs/bridge-app.ts', import.meta.url);
const floorEntry = new URL('../procs/slack-floor.ts', import.meta.url);

/** Event sent → 200 acknowledgement: p50 and p99 (ms) of the measured events, and more. */
export interface AckResult extends Percentiles {
  max: number;
  measured: number;
  /** Jobs found in Redis afterwards: every event should have made one. */
  queued: number;
  /** CPU time of the ingress process per event (µs), over the whole run, warm-up included. */
  cpuPerEventUs: number;
  sent: number;
}

async function measureAcks(ctx: BenchContext, kind: PathKind, slack: SlackInfo): Promise<AckResult> {
  const s = ctx.settings;
  const id = slack.identity;
  const env = (prefix: string): Record<string, string> =>
    kind === 'bridge'
      ? { ROLE: 'ingress', ...slackAppEnv(ctx, slack, prefix), ...benchBridgeEnv(CHANNEL) }
      : { REDIS_URL: s.redisUrl, QUEUE_PREFIX: prefix, SLACK_SIGNING_SECRET: id.signingSecret };
  const entry = kind === 'bridge' ? bridgeEntry : floorEntry;
  return withSlackEventsApp(ctx, entry, { run: `s5-${kind}`, label: `s5-${kind}-ingress`, env }, async ({ child, url, agent, prefix }) => {
    const state = new SlackState(id);
    const warmCount = Math.round((s.slackRate * s.slackWarmupMs) / 1000);
    const acks: number[] = [];
    const cpuBefore = await processCpuMs(child.pid);
    const run = await openLoop(s.slackRate, s.slackWarmupMs + s.slackMeasureMs, async (i, dueAt) => {
      const m = userMessage(state, { channel: CHANNEL, user: 'UUSER0001', text: `<@${id.botUserId}> question ${i}` });
      const body = JSON.stringify(eventEnvelope(state, m.mention));
      const status = await postSigned(url, agent, id.signingSecret, body, { 'user-agent': 'Slackbot 1.0 (+https://api.slack.com/robots)' });
      if (status !== 200) throw new Error(`answered ${status}`);
      if (i >= warmCount) acks.push(now() - dueAt);
    });
    if (run.failed > 0) throw new Error(`${kind}: ${run.failed} of ${run.sent} Slack events failed (${run.firstError})`);
    // The bridge acks before it enqueues: give the last ones a moment to land.
    await new Promise((r) => setTimeout(r, 1_000));
    const cpuPerEventUs = (((await processCpuMs(child.pid)) - cpuBefore) * 1000) / run.sent;
    const queue = new Queue('chat', { connection: ctx.redis, prefix });
    const counts = await queue.getJobCounts('waiting', 'prioritized', 'active', 'completed');
    await queue.close();
    const queued = Object.values(counts).reduce((a, b) => a + b, 0);
    return { ...percentiles(acks), max: percentile(acks, 100), measured: acks.length, queued, sent: run.sent, cpuPerEventUs };
  });
}

/** Scenario 5: signed Slack events → 200 acknowledgement, at a fixed rate. */
export async function slackAckScenario(ctx: BenchContext): Promise<ResultRow[]> {
  const slack = await ctx.services.call<SlackInfo>('startSlack');
  const r = {} as Record<PathKind, AckResult>;
  for (const kind of ['floor', 'bridge'] as const) {
    r[kind] = await measureAcks(ctx, kind, slack);
    ctx.log(`  s5 ${kind}: ack p50 ${r[kind].p50.toFixed(2)} p99 ${r[kind].p99.toFixed(2)} max ${r[kind].max.toFixed(1)} ms; ${r[kind].queued}/${r[kind].sent} queued`);
  }
  const rate = ctx.settings.slackRate;
  const queuedNote = `jobs queued: bridge ${r.bridge.queued}/${r.bridge.sent}, floor ${r.floor.queued}/${r.floor.sent}`;
  return [
    row(`5 · Slack event → 200 ack p50 at ${rate}/s`, 'ms', r.bridge.p50, r.floor.p50, undefined, `${r.bridge.measured} signed app_mention events, ROLE=ingress`, 2),
    row(`5 · Slack event → 200 ack p99 at ${rate}/s`, 'ms', r.bridge.p99, r.floor.p99, TARGETS.slackAck, queuedNote, 2),
    row('5 · Slack ingress CPU per event', 'µs', r.bridge.cpuPerEventUs, r.floor.cpuPerEventUs, undefined, 'CPU time of the ingress process ÷ events (Bolt, signature check, ingress, enqueue); floor: node:http + Queue.add', 0),
  ];
}
