import type { PlatformEntry } from '../../src/core/platform-context.js';
import { slackSettings } from './config.js';

/** Slack as the entry point lists it: settings now, the SDK-bearing module only when configured. */
export const slack: PlatformEntry = {
  settings: slackSettings,
  load: async () => (await import('./index.js')).slackPlatform,
};
