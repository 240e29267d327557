import { PLATFORMS, type Platform } from '../core/conversation.js';

/** A channel → instance default from `BINDINGS`. The channel `dm` stands for every direct message. */
export interface BindingDefault {
  platform: Platform;
  channelId: string;
  instanceId: string;
}


/** Parses `slack:C0123=inst_a,discord:998877=inst_b`. Throws with a message that names BINDINGS. */
export function parseBindingDefaults(value: string | undefined): BindingDefault[] {
  if (!value) return [];
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const m = /^([a-z]+):([^=\s]+)=(\S+)$/.exec(entry);
      const platform = m?.[1] as Platform | undefined;
      if (!m || !platform || !PLATFORMS.includes(platform)) {
        throw new Error(
          `BINDINGS entry "${entry.slice(0, 80)}" is not platform:channel=instance: write it like slack:C0123=inst_a,discord:998877=inst_b`,
        );
      }
      return { platform, channelId: m[2]!, instanceId: m[3]! };
    });
}
