import { randomUUID } from 'node:crypto';
import { loadTestConfig } from '../support/config.js';
import { startBridge, type Bridge } from '../../src/app.js';

import { startAgentEmulator, type AgentEmulator, type AgentEmulatorOptions } from '../../src/demo/agent-emulator.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import { Metrics } from '../../src/metrics.js';
import { discordPlatform } from '../../adapters/discord/index.js';
import { createDiscordAdapter, type DiscordAdapter } from '../../adapters/discord/adapter.js';
import { createFeedbackStore, type FeedbackStore } from '../../src/feedback/index.js';
import type { PlatformModule } from '../../src/core/platform-context.js';
import { startDiscordEmulator, type DiscordEmulator, type DiscordEmulatorOptions, type Json } from '../emulators/discord/index.js';
import { LogCapture } from '../support/pipeline.js';
import { deleteKeys } from '../support/redis-cleanup.js';

export interface DiscordHarness {
  prefix: string;
  discord: DiscordEmulator;
  agent: AgentEmulator;
  bridge: Bridge;
  adapter: DiscordAdapter;
  /** The feedback store the adapter records 👍/👎 clicks in. */
  feedback: FeedbackStore;
  logs: LogCapture;
  close(): Promise<void>;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  emulator?: DiscordEmulatorOptions;
  agent?: AgentEmulatorOptions;
  /** Configure the agent emulator's dashboard session (needed for credentials). */
  session?: boolean;
}

/**
 * The real bridge (role `all`: the discord.js gateway client, real Redis, the core worker) wired
 * to the Discord emulator and the agent emulator. `general` and DMs are bound to `demo-helper`.
 */
export async function startDiscordBridge(options: HarnessOptions = {}): Promise<DiscordHarness> {
  const prefix = `dtest-${randomUUID().slice(0, 8)}`;
  const agent = await startAgentEmulator(options.agent);
  const discord = await startDiscordEmulator(options.emulator);
  const w = discord.world;
  const logs = new LogCapture();
  const secrets = new SecretRegistry();
  const config = loadTestConfig({
    AGENT_API_BASE_URL: agent.baseUrl,
    AGENT_API_KEY: agent.apiKey,
    DISCORD_TOKEN: discord.token,
    DISCORD_API_URL: discord.apiUrl,
    DISCORD_GUILD_ID: w.guildId,
    DISCORD_ADMIN_ROLE_IDS: w.adminRoleId,
    QUEUE_PREFIX: prefix,
    HTTP_PORT: '0',
    PLAYGROUND: 'false',
    RETRY_BASE_DELAY_MS: '20',
    BINDINGS: `discord:${w.channels.general.id}=demo-helper,discord:dm=demo-helper`,
    LOG_LEVEL: 'debug',
    ...(options.session ? { AGENT_SESSION_COOKIE: agent.sessionCookie } : {}),
    ...options.env,
  });
  let adapter: DiscordAdapter | undefined;
  let feedback: FeedbackStore | undefined;
  const metrics = new Metrics();
  const platform: PlatformModule = {
    ...discordPlatform,
    createReplyPort: (deps) => discordPlatform.createReplyPort(deps),
    createAdapter: (ctx) => {
      feedback = createFeedbackStore({ redis: ctx.redis, prefix: `${prefix}:chat`, registry: metrics.registry });
      return (adapter = createDiscordAdapter(ctx, { feedback }));
    },
  };
  let bridge: Bridge;
  try {
    bridge = await startBridge({
      config,
      secrets,
      logger: createLogger({ level: config.logLevel, registry: secrets, destination: logs }),
      metrics,
      platforms: [platform],
    });
  } catch (err) {
    await Promise.allSettled([discord.close(), agent.close()]);
    await deleteKeys(prefix);
    throw err;
  }
  return {
    prefix,
    discord,
    agent,
    bridge,
    adapter: adapter!,
    feedback: feedback!,
    logs,
    close: async () => {
      await bridge.stop();
      await Promise.allSettled([discord.close(), agent.close()]);
      await deleteKeys(prefix);
    },
  };
}

/** Polls until `predicate` returns a truthy value (for state outside the Discord emulator). */
export async function until<T>(predicate: () => T | undefined | null | false, label: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = predicate();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${label}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Message creates the bot sent through REST (bodies as sent). */
export function messageCreates(discord: DiscordEmulator, channelId?: string): Json[] {
  return discord.calls
    .filter((c) => c.method === 'POST' && /^\/channels\/\d+\/messages$/.test(c.path) && (!channelId || c.path.includes(channelId)))
    .map((c) => c.json ?? {});
}

export const mention = (discord: DiscordEmulator) => `<@${discord.world.bot.id}>`;
