import { startAgentEmulator } from '../../../src/demo/agent-emulator.js';
import { discordPlatform } from '../../../adapters/discord/index.js';
import { startDiscordEmulator, type EmuChannel } from '../../emulators/discord/index.js';
import type { DiscordHarness, HarnessOptions } from '../../discord/harness.js';
import { newPrefix, startTestBridge } from '../../support/bridge-harness.js';
import { discordEnv } from '../../support/platform-env.js';

export interface ReliabilityDiscord extends Omit<DiscordHarness, 'adapter' | 'feedback'> {
  /** Channels added to the emulated guild before the bot connected. */
  extra: EmuChannel[];
}

export interface ReliabilityDiscordOptions extends HarnessOptions {
  /** Guild text channels to add to the world (ids from 931000000000000001 up). */
  extraChannels?: number;
}

/**
 * The real bridge with the discord.js gateway client, the Discord emulator and the agent
 * emulator, with test/discord/harness.ts's settings, but the guild can be given extra channels before the
 * bot connects (so GUILD_CREATE lists them), for traffic over many conversations.
 * `general` and DMs are bound to demo-helper; extra channels are bound with mode `all`.
 */
export async function startReliabilityDiscord(options: ReliabilityDiscordOptions = {}): Promise<ReliabilityDiscord> {
  const prefix = newPrefix('rdisc');
  const agent = await startAgentEmulator(options.agent);
  const discord = await startDiscordEmulator(options.emulator);
  const w = discord.world;
  const extra: EmuChannel[] = [];
  for (let i = 0; i < (options.extraChannels ?? 0); i++) {
    const channel: EmuChannel = { id: String(931_000_000_000_000_001n + BigInt(i)), type: 0, name: `load-${i}`, guildId: w.guildId };
    (w.channels as Record<string, EmuChannel>)[`load${i}`] = channel;
    extra.push(channel);
  }
  const t = await startTestBridge({
    prefix,
    agent,
    env: { ...discordEnv(discord, agent, options.session), ...options.env },
    platforms: [discordPlatform],
    closeWith: [discord],
    ready: async (bridge) => {
      for (const c of extra) {
        await bridge.bindings.set('discord', c.id, { instanceId: 'demo-helper', mode: 'all', errorPolicy: 'reply', context: 'off', source: 'admin' });
      }
    },
  });
  return { prefix, discord, agent, bridge: t.bridge, logs: t.logs, extra, close: t.close };
}
