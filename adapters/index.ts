import type { Config } from '../src/config/load.js';
import type { PlatformModule } from '../src/core/platform-context.js';

/**
 * The platforms this process runs, from config. Each SDK is loaded only when its platform
 * is configured, so a Slack-only deployment never loads discord.js.
 */
export async function platformsFor(config: Readonly<Config>): Promise<PlatformModule[]> {
  const platforms: PlatformModule[] = [];
  if (config.slack) platforms.push((await import('./slack/index.js')).slackPlatform);
  if (config.discord) platforms.push((await import('./discord/index.js')).discordPlatform);
  if (config.playground.enabled || config.mode === 'demo') platforms.push((await import('./web/index.js')).webPlatform);
  return platforms;
}
