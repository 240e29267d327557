/**
 * The platform side of every scenario, in a process of its own so that it does not take CPU
 * from the processes being measured: the agent emulator (answers at once, or after a set
 * delay), the reply sink, and, when asked, the Slack and Discord emulators.
 */
import { startAgentEmulator } from '../../src/demo/agent-emulator.js';
import { startDiscordEmulator, type DiscordEmulator } from '../../test/emulators/discord/index.js';
import { startSlackEmulator, type SlackEmulator } from '../../test/emulators/slack/index.js';
import { eventEnvelope } from '../../test/emulators/slack/payloads.js';
import { ready, serve } from '../lib/ipc.js';
import { BenchSink } from './sink.js';
import { exitSoon, probeHandlers } from './probe.js';
import type { DiscordInfo, ServicesInfo, SlackInfo } from './services-types.js';

// A load balancer's idle timeout (60 s, as the sink's): with Node's 5 s default, a worker
// starved of CPU at the end of a wave of 5,000 slow calls reused connections the emulator was
// closing, and the floor (which never retries) lost those messages ("other side closed").
const agent = await startAgentEmulator({ apiKey: 'bench-agent-key', maxCalls: 100, keepAliveTimeoutMs: 60_000 });
const sink = await new BenchSink().start();
let slack: SlackEmulator | undefined;
let discord: DiscordEmulator | undefined;
let slackPostsRead = 0;
let slackCallsRead = 0;

serve({
  ...probeHandlers(),
  setDelay: (ms: number) => agent.setDelay(ms),
  count: () => sink.count,
  /** Chat calls open at the agent emulator now, and the most at once since the last reset. */
  agentOpen: () => ({ open: agent.openRequests(), peak: agent.peakOpenRequests() }),
  /** The last chat calls the agent emulator recorded (at most 100): message text and arrival (ms). */
  agentCalls: () => agent.chatCalls().map((c) => ({ message: c.message, at: c.at })),
  collect: () => sink.collect(),
  /** Replies posted to the Slack emulator since the last read: thread, text and arrival (ms, this clock). */
  slackPosts: () => {
    if (!slack) return [];
    const calls = slack.posted();
    const fresh = calls.slice(slackPostsRead);
    slackPostsRead = calls.length;
    return fresh.map((c) => ({ threadTs: c.params.thread_ts ?? '', text: c.params.text ?? '', at: c.at }));
  },
  /** Web API calls the Slack emulator answered since the last read, by method. */
  slackCallCounts: () => {
    if (!slack) return {};
    const counts: Record<string, number> = {};
    for (const c of slack.calls.slice(slackCallsRead)) counts[c.method] = (counts[c.method] ?? 0) + 1;
    slackCallsRead = slack.calls.length;
    return counts;
  },
  /**
   * Scenario 7's events, stored in the Slack emulator as real messages (so reactions and
   * replies find them): `threads` thread roots, then `perThread` app_mention bodies in each,
   * as signed-ready JSON, grouped by thread.
   */
  slackBurst: ({ channel, threads, perThread, users }: { channel: string; threads: number; perThread: number; users: number }) => {
    if (!slack) throw new Error('startSlack first');
    const bot = slack.identity.botUserId;
    const out: Array<{ threadTs: string; bodies: string[] }> = [];
    for (let t = 0; t < threads; t++) {
      const root = slack.userMessage({ channel, user: `UPEER${String(t % users).padStart(4, '0')}`, text: `thread ${t}` });
      const bodies: string[] = [];
      for (let k = 0; k < perThread; k++) {
        const m = slack.userMessage({ channel, user: `UPEER${String(t % users).padStart(4, '0')}`, text: `<@${bot}> t${t} q${k}`, threadTs: root.ts });
        bodies.push(JSON.stringify(eventEnvelope(slack.state, m.mention)));
      }
      out.push({ threadTs: root.ts, bodies });
    }
    return out;
  },
  startSlack: async (): Promise<SlackInfo> => {
    slack ??= await startSlackEmulator();
    return { apiUrl: slack.apiUrl, identity: slack.identity };
  },
  startDiscord: async (): Promise<DiscordInfo> => {
    discord ??= await startDiscordEmulator();
    return { token: discord.token, apiUrl: discord.apiUrl, guildId: discord.world.guildId, channelId: discord.world.channels.general.id };
  },
  stop: async () => {
    await Promise.allSettled([agent.close(), sink.close(), slack?.close(), discord?.close()]);
    exitSoon();
  },
});

const info: ServicesInfo = { agentBaseUrl: agent.baseUrl, agentApiKey: agent.apiKey, sinkUrl: sink.url };
ready(info);
