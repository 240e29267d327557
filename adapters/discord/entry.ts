import type { PlatformEntry } from '../../src/core/platform-context.js';
import { discordSettings } from './config.js';

/** Discord as the entry point lists it: settings now, the SDK-bearing module only when configured. */
export const discord: PlatformEntry = {
  settings: discordSettings,
  load: async () => (await import('./index.js')).discordPlatform,
};
