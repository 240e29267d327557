import { discord } from '../adapters/discord/entry.js';
import { slack } from '../adapters/slack/entry.js';
import { web } from '../adapters/web/entry.js';
import type { Config } from '../src/config/load.js';
import type { PlatformEntry, PlatformModule } from '../src/core/platform-context.js';

/** The platforms agent-bridge speaks. A new one is one more entry here (and its adapters/<name>/). */
export const PLATFORMS: readonly PlatformEntry[] = [slack, discord, web];

/** Their settings modules, for the config loader. */
export const PLATFORM_SETTINGS = PLATFORMS.map((p) => p.settings);

/** The runtime modules of the platforms `config` configures (each SDK loads only then). */
export async function platformsFor(config: Readonly<Config>, entries: readonly PlatformEntry[] = PLATFORMS): Promise<PlatformModule[]> {
  return Promise.all(entries.filter((p) => config.platforms[p.settings.platform] !== undefined).map((p) => p.load()));
}
