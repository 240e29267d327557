import { Child } from '../lib/children.js';
import { sleep } from '../lib/clock.js';
import { deleteKeys } from '../lib/redis-admin.js';
import { median } from '../lib/stats.js';
import type { DiscordInfo, SlackInfo } from '../procs/services-types.js';
import { row, type ResultRow } from '../report/rows.js';
import type { BenchContext } from './context.js';

const bridgeEntry = new URL('../procs/bridge-app.ts', import.meta.url);
const floorEntry = new URL('../procs/floor-worker.ts', import.meta.url);

/** RSS (MB) of a process that has idled `settleMs`: the median of five readings 200 ms apart. */
async function idleRss(child: Child, settleMs: number): Promise<number> {
  await sleep(settleMs);
  const readings: number[] = [];
  for (let i = 0; i < 5; i++) {
    readings.push(await child.call<number>('rss'));
    await sleep(200);
  }
  return median(readings) / 2 ** 20;
}

/**
 * Scenario 6: idle RSS of `ROLE=all` with Slack (Socket Mode) and Discord (gateway) both
 * connected to their emulators, next to an idle bare BullMQ worker process.
 */
export async function idleRssScenario(ctx: BenchContext): Promise<ResultRow[]> {
  const s = ctx.settings;
  const slack = await ctx.services.call<SlackInfo>('startSlack');
  const discord = await ctx.services.call<DiscordInfo>('startDiscord');
  const svc = ctx.services.readyValue;
  const prefixes = { bridge: `${ctx.runId}-s6-bridge`, floor: `${ctx.runId}-s6-floor` };
  const rss = { bridge: 0, floor: 0 };
  try {
    const floor = await Child.spawn(floorEntry, {
      label: 's6-floor-idle',
      env: {
        REDIS_URL: s.redisUrl,
        AGENT_API_BASE_URL: svc.agentBaseUrl,
        AGENT_API_KEY: svc.agentApiKey,
        BENCH_SINK_URL: svc.sinkUrl,
        QUEUE_PREFIX: prefixes.floor,
        WORKER_CONCURRENCY: '50',
      },
    });
    try {
      rss.floor = await idleRss(floor, s.idleSettleMs);
    } finally {
      await floor.stop();
    }
    const bridge = await Child.spawn(bridgeEntry, {
      label: 's6-bridge-all',
      env: {
        ROLE: 'all',
        REDIS_URL: s.redisUrl,
        AGENT_API_BASE_URL: svc.agentBaseUrl,
        AGENT_API_KEY: svc.agentApiKey,
        SLACK_BOT_TOKEN: slack.identity.botToken,
        SLACK_APP_TOKEN: slack.identity.appToken,
        SLACK_API_URL: slack.apiUrl,
        DISCORD_TOKEN: discord.token,
        DISCORD_API_URL: discord.apiUrl,
        DISCORD_GUILD_ID: discord.guildId,
        QUEUE_PREFIX: prefixes.bridge,
        HTTP_PORT: '0',
        PLAYGROUND: 'false',
        LOG_LEVEL: 'warn',
        SHUTDOWN_TIMEOUT_MS: '5000',
        BINDINGS: `slack:C0GENERAL=demo-helper,discord:${discord.channelId}=demo-helper`,
      },
    });
    try {
      rss.bridge = await idleRss(bridge, s.idleSettleMs);
    } finally {
      await bridge.stop();
    }
  } finally {
    await deleteKeys(ctx.redis, prefixes.bridge);
    await deleteKeys(ctx.redis, prefixes.floor);
  }
  ctx.log(`  s6 idle RSS: bridge ROLE=all ${rss.bridge.toFixed(0)} MB, floor ${rss.floor.toFixed(0)} MB`);
  return [
    row('6 · idle RSS, ROLE=all with Slack + Discord', 'MB', rss.bridge, rss.floor, undefined,
      `after ${s.idleSettleMs / 1000} s idle; floor: bare BullMQ worker process; both under tsx`, 0),
  ];
}
