/**
 * The platform side of every scenario, in a process of its own so that it does not take CPU
 * from the processes being measured: the agent emulator (answers at once, or after a set
 * delay), the reply sink, and, when asked, the Slack and Discord emulators.
 */
import { startAgentEmulator } from '../../src/demo/agent-emulator.js';
import { startDiscordEmulator, type DiscordEmulator } from '../../test/emulators/discord/index.js';
import { startSlackEmulator, type SlackEmulator } from '../../test/emulators/slack/index.js';
import { ready, serve } from '../lib/ipc.js';
import { BenchSink } from './sink.js';
import { exitSoon, probeHandlers } from './probe.js';
import type { DiscordInfo, ServicesInfo, SlackInfo } from './services-types.js';

const agent = await startAgentEmulator({ apiKey: 'bench-agent-key', maxCalls: 100 });
const sink = await new BenchSink().start();
let slack: SlackEmulator | undefined;
let discord: DiscordEmulator | undefined;

serve({
  ...probeHandlers(),
  setDelay: (ms: number) => agent.setDelay(ms),
  count: () => sink.count,
  /** The last chat calls the agent emulator recorded (at most 100): message text and arrival (ms). */
  agentCalls: () => agent.chatCalls().map((c) => ({ message: c.message, at: c.at })),
  collect: () => sink.collect(),
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
