import type { PlatformSettings } from '../../src/config/platform-settings.js';

/**
 * The playground (`web`) has no settings of its own beyond the core's PLAYGROUND and
 * PLAYGROUND_TOKEN (it is the demo's face): it runs when those (or the demo) say so, and never
 * counts as a real platform being configured.
 */
export const webSettings: PlatformSettings<Record<string, never>> = {
  platform: 'web',
  present: () => false,
  load: (_env, context) => ({ ...(context.playground ? { settings: {} } : {}), problems: [], secrets: [] }),
};
