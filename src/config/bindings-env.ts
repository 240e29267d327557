import type { Platform } from '../core/conversation.js';

/** A channel → instance default from `BINDINGS`. The channel `dm` stands for every direct message (the fallback of each workspace's own DM binding). */
export interface BindingDefault {
  platform: Platform;
  channelId: string;
  instanceId: string;
}


/**
 * Parses `slack:C0123=inst_a,discord:998877=inst_b`, for the platforms this deployment knows.
 * Throws with a message that names BINDINGS.
 */
export function parseBindingDefaults(value: string | undefined, known: readonly Platform[]): BindingDefault[] {
  if (!value) return [];
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const m = /^([a-z]+):([^=\s]+)=(\S+)$/.exec(entry);
      const platform = m?.[1];
      if (!m || !platform) {
        throw new Error(
          `BINDINGS entry "${entry.slice(0, 80)}" is not platform:channel=instance: write it like slack:C0123=inst_a,discord:998877=inst_b`,
        );
      }
      if (!known.includes(platform)) {
        throw new Error(`BINDINGS entry "${entry.slice(0, 80)}" names the platform ${platform}, which this bridge does not run: use one of ${known.join(', ')}`);
      }
      return { platform, channelId: m[2]!, instanceId: m[3]! };
    });
}
