import { randomUUID } from 'node:crypto';
import { loadTestConfig } from '../../support/config.js';
import { startBridge, type Bridge } from '../../../src/app.js';

import { startAgentEmulator, type AgentEmulator, type AgentEmulatorOptions } from '../../../src/demo/agent-emulator.js';
import { createLogger, SecretRegistry } from '../../../src/logger.js';
import { Metrics } from '../../../src/metrics.js';
import { discordPlatform } from '../../../adapters/discord/index.js';
import { startDiscordEmulator, type DiscordEmulator, type DiscordEmulatorOptions, type EmuChannel } from '../../emulators/discord/index.js';
import { LogCapture } from '../../support/pipeline.js';
import { deleteKeysAt, SHARED_REDIS } from './keys.js';

export interface ReliabilityDiscord {
  prefix: string;
  discord: DiscordEmulator;
  agent: AgentEmulator;
  bridge: Bridge;
  logs: LogCapture;
  /** Channels added to the emulated guild before the bot connected. */
  extra: EmuChannel[];
  close(): Promise<void>;
}

export interface ReliabilityDiscordOptions {
  env?: Record<string, string>;
  emulator?: DiscordEmulatorOptions;
  agent?: AgentEmulatorOptions;
  /** Guild text channels to add to the world (ids from 931000000000000001 up). */
  extraChannels?: number;
  /** Configure the agent emulator's dashboard session (credentials). */
  session?: boolean;
}

/**
 * The real bridge with the discord.js gateway client, the Discord emulator and the agent
 * emulator, like test/discord/harness.ts, but the guild can be given extra channels before the
 * bot connects (so GUILD_CREATE lists them), for traffic over many conversations.
 * `general` and DMs are bound to demo-helper; extra channels are bound with mode `all`.
 */
export async function startReliabilityDiscord(options: ReliabilityDiscordOptions = {}): Promise<ReliabilityDiscord> {
  const prefix = `rdisc-${randomUUID().slice(0, 8)}`;
  const agent = await startAgentEmulator(options.agent);
  const discord = await startDiscordEmulator(options.emulator);
  const w = discord.world;
  const extra: EmuChannel[] = [];
  for (let i = 0; i < (options.extraChannels ?? 0); i++) {
    const channel: EmuChannel = { id: String(931_000_000_000_000_001n + BigInt(i)), type: 0, name: `load-${i}`, guildId: w.guildId };
    (w.channels as Record<string, EmuChannel>)[`load${i}`] = channel;
    extra.push(channel);
  }
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
  let bridge: Bridge;
  try {
    bridge = await startBridge({
      config,
      secrets,
      logger: createLogger({ level: config.logLevel, registry: secrets, destination: logs }),
      metrics: new Metrics(),
      platforms: [discordPlatform],
    });
    for (const c of extra) {
      await bridge.bindings.set('discord', c.id, { instanceId: 'demo-helper', mode: 'all', errorPolicy: 'reply', context: 'off', source: 'admin' });
    }
  } catch (err) {
    await Promise.allSettled([discord.close(), agent.close()]);
    await deleteKeysAt(SHARED_REDIS, prefix);
    throw err;
  }
  return {
    prefix,
    discord,
    agent,
    bridge,
    logs,
    extra,
    close: async () => {
      await bridge.stop();
      await Promise.allSettled([discord.close(), agent.close()]);
      await deleteKeysAt(config.redis.url, prefix);
    },
  };
}
