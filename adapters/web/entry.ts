import type { PlatformEntry } from '../../src/core/platform-context.js';
import { webSettings } from './config.js';

/** Web as the entry point lists it: settings now, the SDK-bearing module only when configured. */
export const web: PlatformEntry = {
  settings: webSettings,
  load: async () => (await import('./index.js')).webPlatform,
};
