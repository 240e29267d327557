import { z } from 'zod';
import type { Config } from '../../src/config/load.js';
import { areSet, givenSettings, missingSetting, parseSettings, secretValues, type PlatformSettings } from '../../src/config/platform-settings.js';
import { bool, httpUrl, list, optionalString } from '../../src/config/schema.js';
import { pastedSecretProblem } from '../../src/config/pasted-secret.js';

export interface DiscordConfig {
  token: string;
  apiUrl?: string;
  guildId?: string;
  adminRoleIds: string[];
  allowBots: boolean;
  replyPing: boolean;
  /**
   * Which gateway shards this process owns: `ids` undefined = all of them; `count` a number or
   * `auto` (Discord's recommended count).
   */
  shards: { ids?: number[]; count: number | 'auto' };
}

/** `0,1`, `0-3`, `0-1,4`: the Discord shards one ingress process owns. */
const shardIds = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v.trim() === '') return undefined;
    const parts = v.split(',').map((s) => s.trim()).filter(Boolean);
    // `,` alone would reach discord.js as no shard at all and fail only when connecting.
    if (parts.length === 0) {
      ctx.addIssue({ code: 'custom', message: 'DISCORD_SHARD_IDS lists no shard: give shard numbers or ranges, for example 0,1 or 0-3, or leave it unset to run every shard' });
      return z.NEVER;
    }
    const ids = new Set<number>();
    for (const part of parts) {
      const m = /^(\d{1,5})(?:\s*-\s*(\d{1,5}))?$/.exec(part);
      const from = m ? Number(m[1]) : NaN;
      const to = m?.[2] !== undefined ? Number(m[2]) : from;
      if (!m || to < from) {
        ctx.addIssue({ code: 'custom', message: 'DISCORD_SHARD_IDS must list shard numbers or ranges, for example 0,1 or 0-3' });
        return z.NEVER;
      }
      for (let id = from; id <= to; id++) ids.add(id);
    }
    return [...ids].sort((a, b) => a - b);
  });

/** A number of shards, or `auto` (Discord's recommendation from `GET /gateway/bot`). */
const shardCount = z
  .string()
  .optional()
  .transform((v, ctx): number | 'auto' => {
    if (v === undefined || v.trim() === '' || v.trim().toLowerCase() === 'auto') return 'auto';
    const n = /^\d+$/.test(v.trim()) ? Number(v.trim()) : NaN;
    if (!Number.isInteger(n) || n < 1 || n > 100_000) {
      ctx.addIssue({ code: 'custom', message: 'DISCORD_SHARD_COUNT must be auto or a whole number from 1 to 100000, in digits only' });
      return z.NEVER;
    }
    return n;
  });

/**
 * Role IDs (digits). A role's name or mention matched nobody, so its members were refused
 * with no word of why: refused at start-up instead, the entry named.
 */
const roleIds = list.transform((ids, ctx) => {
  const wrong = ids.find((id) => !/^\d{1,20}$/.test(id));
  if (wrong === undefined) return ids;
  ctx.addIssue({
    code: 'custom',
    message: `DISCORD_ADMIN_ROLE_IDS: \`${wrong.slice(0, 40)}\` is not a role ID. Give role IDs (digits), comma-separated: Server Settings → Roles → the role's ⋯ menu → Copy Role ID (with Developer Mode on in User Settings → Advanced)`,
  });
  return z.NEVER;
});

/**
 * The Developer Portal's other values, pasted where the bot token belongs: refused at start-up
 * (a worker-only process would otherwise fail every reply with 401). Only the value's shape is named.
 */
function otherPortalValue(token: string): string | undefined {
  const FIX = 'set it to the bot token (your application → Bot → Reset Token), three parts separated by dots';
  if (/^\d{15,21}$/.test(token)) return `DISCORD_TOKEN is an application ID (digits only), not the bot token: ${FIX}`;
  if (/^[0-9a-f]{64}$/i.test(token)) return `DISCORD_TOKEN is the application's public key (64 hex digits), not the bot token: ${FIX}`;
  return undefined;
}

/** Every DISCORD_* variable: the names are part of the product's interface (.env.example documents them). */
export const discordSchema = z.object({
  DISCORD_TOKEN: optionalString,
  DISCORD_API_URL: httpUrl('DISCORD_API_URL'),
  // A server's name or a pasted link reached the commands PUT's path: registration failed after start-up, logged only.
  DISCORD_GUILD_ID: optionalString.refine((v) => v === undefined || /^\d{15,21}$/.test(v), {
    message:
      "DISCORD_GUILD_ID must be a server ID (digits), not its name or a link: right-click the server's icon → Copy Server ID (with Developer Mode on in User Settings → Advanced), or leave it unset to register the commands globally",
  }),
  DISCORD_ADMIN_ROLE_IDS: roleIds,
  DISCORD_ALLOW_BOTS: bool('DISCORD_ALLOW_BOTS', false),
  DISCORD_REPLY_PING: bool('DISCORD_REPLY_PING', false),
  DISCORD_SHARD_IDS: shardIds,
  DISCORD_SHARD_COUNT: shardCount,
});

/** Discord's settings, read by the one config loader (src/config) through this module. */
export const discordSettings: PlatformSettings<DiscordConfig> = {
  platform: 'discord',
  toRunForReal: { variables: 'DISCORD_TOKEN', gives: 'Discord' },
  present: (env) => env.DISCORD_TOKEN !== undefined && env.DISCORD_TOKEN.trim() !== '',
  givenWithoutToken(env) {
    const given = givenSettings(discordSchema, env, ['DISCORD_TOKEN']);
    if (given.length === 0) return undefined;
    return missingSetting(
      'DISCORD_TOKEN',
      `${areSet(given)}, so Discord is meant to run`,
      `set it to the bot token from the Discord Developer Portal (your application, Bot, Reset Token), or remove ${given.join(', ')} to run without Discord`,
    );
  },
  bindingChannelProblem: (channelId) =>
    /^\d{1,21}$/.test(channelId)
      ? undefined
      : "a Discord channel is bound by its ID (digits), not its name: right-click the channel → Copy Channel ID (with Developer Mode on in User Settings → Advanced); dm stands for direct messages",
  load(env) {
    const { data: e, problems } = parseSettings(discordSchema, env);
    if (!e) return { problems, secrets: [] };
    const count = e.DISCORD_SHARD_COUNT;
    const beyond = e.DISCORD_SHARD_IDS?.find((id) => typeof count === 'number' && id >= count);
    if (beyond !== undefined) {
      problems.push(`DISCORD_SHARD_IDS lists shard ${beyond} but DISCORD_SHARD_COUNT is ${String(count)}: shard IDs go from 0 to ${Number(count) - 1}`);
    }
    if (!e.DISCORD_TOKEN) return { problems, secrets: [] };
    // "Bot abc…" copied whole: the gateway strips the scheme, the REST client of the workers
    // does not, so the bot read every message and every reply failed with 401.
    const pasted =
      pastedSecretProblem('DISCORD_TOKEN', e.DISCORD_TOKEN, { sentAs: 'Authorization: Bot <token>, adding "Bot " itself' }) ?? otherPortalValue(e.DISCORD_TOKEN);
    if (pasted !== undefined) return { problems: [...problems, pasted], secrets: secretValues(e.DISCORD_TOKEN) };
    return {
      settings: {
        token: e.DISCORD_TOKEN,
        apiUrl: e.DISCORD_API_URL,
        guildId: e.DISCORD_GUILD_ID,
        adminRoleIds: e.DISCORD_ADMIN_ROLE_IDS,
        allowBots: e.DISCORD_ALLOW_BOTS,
        replyPing: e.DISCORD_REPLY_PING,
        shards: { ...(e.DISCORD_SHARD_IDS ? { ids: e.DISCORD_SHARD_IDS } : {}), count },
      },
      problems,
      secrets: secretValues(e.DISCORD_TOKEN),
    };
  },
};

/** This process's Discord settings, when Discord is configured. */
export function discordConfigOf(config: Readonly<Config>): DiscordConfig | undefined {
  return config.platforms.discord as DiscordConfig | undefined;
}
