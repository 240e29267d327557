import type { Bridge } from '../../src/app.js';
import { startAgentEmulator, type AgentEmulator, type AgentEmulatorOptions } from '../../src/demo/agent-emulator.js';
import { Metrics } from '../../src/metrics.js';
import { discordPlatform } from '../../adapters/discord/index.js';
import { createDiscordAdapter, type DiscordAdapter } from '../../adapters/discord/adapter.js';
import { createFeedbackStore, type FeedbackStore } from '../../src/feedback/index.js';
import type { PlatformModule } from '../../src/core/platform-context.js';
import { startDiscordEmulator, type DiscordEmulator, type DiscordEmulatorOptions, type EmuChannel, type Json } from '../emulators/discord/index.js';
import { newPrefix, startTestBridge } from '../support/bridge-harness.js';
import { discordEnv } from '../support/platform-env.js';
import type { LogCapture } from '../support/log-capture.js';
import type { HeldCalls } from '../support/held-calls.js';
import { until as pollUntil } from '../support/until.js';

export interface DiscordHarness {
  prefix: string;
  discord: DiscordEmulator;
  agent: AgentEmulator;
  bridge: Bridge;
  adapter: DiscordAdapter;
  /** The feedback store the adapter records 👍/👎 clicks in. */
  feedback: FeedbackStore;
  logs: LogCapture;
  /** Channels added to the emulated guild before the bot connected (`extraChannels`). */
  extra: EmuChannel[];
  close(): Promise<void>;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  emulator?: DiscordEmulatorOptions;
  agent?: AgentEmulatorOptions;
  /** Configure the agent emulator's dashboard session (needed for credentials). */
  session?: boolean;
  /**
   * Guild text channels to add to the world before the bot connects (so GUILD_CREATE lists
   * them), ids from 931000000000000001 up, bound with mode `all`: traffic over many conversations.
   */
  extraChannels?: number;
  /** How often the adapter reports a shard still reconnecting. */
  stillDownEveryMs?: number;
  /**
   * The agent replies with `held.reply` (a call whose message holds `HOLD` waits until released,
   * see held-questions.ts), and `close` releases what is still held first.
   */
  held?: HeldCalls;
}

/**
 * The real bridge (role `all`: the discord.js gateway client, real Redis, the core worker) wired
 * to the Discord emulator and the agent emulator. `general` and DMs are bound to `demo-helper`.
 */
export async function startDiscordBridge(options: HarnessOptions = {}): Promise<DiscordHarness> {
  const prefix = newPrefix('dtest');
  const held = options.held;
  const agent = await startAgentEmulator(held ? { ...options.agent, reply: held.reply } : options.agent);
  const discord = await startDiscordEmulator(options.emulator);
  const extra = addChannels(discord, options.extraChannels ?? 0);
  let adapter: DiscordAdapter | undefined;
  let feedback: FeedbackStore | undefined;
  const metrics = new Metrics();
  const platform: PlatformModule = {
    ...discordPlatform,
    createReplyPort: (deps) => discordPlatform.createReplyPort(deps),
    createAdapter: (ctx) => {
      feedback = createFeedbackStore({ redis: ctx.redis, prefix: `${prefix}:chat`, registry: metrics.registry });
      return (adapter = createDiscordAdapter(ctx, { feedback, ...(options.stillDownEveryMs ? { stillDownEveryMs: options.stillDownEveryMs } : {}) }));
    },
  };
  const t = await startTestBridge({
    prefix,
    agent,
    env: { ...discordEnv(discord, agent, options.session), ...options.env },
    platforms: [platform],
    closeWith: [discord],
    metrics,
    ready: async (bridge) => {
      for (const c of extra) {
        await bridge.bindings.set('discord', c.id, { instanceId: 'demo-helper', mode: 'all', errorPolicy: 'reply', context: 'off', source: 'admin' });
      }
    },
  });
  // Commands register in the background; tests read them as registered.
  await adapter!.commandRegistration;
  const close = held
    ? async () => {
        // A call still held would keep the worker, and so the close, waiting.
        held.release();
        await t.close();
      }
    : t.close;
  return { prefix, discord, agent, bridge: t.bridge, adapter: adapter!, feedback: feedback!, logs: t.logs, extra, close };
}

/** Adds `count` guild text channels (`load0`, `load1`, …) to the emulator's world. */
function addChannels(discord: DiscordEmulator, count: number): EmuChannel[] {
  const w = discord.world;
  const extra: EmuChannel[] = [];
  for (let i = 0; i < count; i++) {
    const channel: EmuChannel = { id: String(931_000_000_000_000_001n + BigInt(i)), type: 0, name: `load-${i}`, guildId: w.guildId };
    (w.channels as Record<string, EmuChannel>)[`load${i}`] = channel;
    extra.push(channel);
  }
  return extra;
}

/** Polls until `predicate` returns a truthy value (for state outside the Discord emulator); 15 s by default. */
export const until = <T>(predicate: () => T | undefined | null | false, label: string, timeoutMs = 15_000): Promise<T> => pollUntil(predicate, label, timeoutMs);

/** Message creates the bot sent through REST (bodies as sent). */
export function messageCreates(discord: DiscordEmulator, channelId?: string): Json[] {
  return discord.calls
    .filter((c) => c.method === 'POST' && /^\/channels\/\d+\/messages$/.test(c.path) && (!channelId || c.path.includes(channelId)))
    .map((c) => c.json ?? {});
}

export const mention = (discord: DiscordEmulator) => `<@${discord.world.bot.id}>`;

/**
 * A bridge running both shards of a two-shard deployment (Discord's recommended count here), with
 * two extra guilds, each bound in its one channel, so that some guild sits on each shard.
 */
export async function startTwoShardBridge(): Promise<DiscordHarness> {
  const h = await startDiscordBridge({ emulator: { extraGuilds: 2, recommendedShards: 2, maxConcurrency: 2 }, agent: { reply: (_id, message) => `echo: ${message}` } });
  for (const g of h.discord.world.extraGuilds) {
    await h.bridge.bindings.set('discord', g.channel.id, { instanceId: 'demo-helper', mode: 'mention', errorPolicy: 'reply', context: 'off', source: 'admin' });
  }
  return h;
}
