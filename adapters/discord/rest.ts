import { REST } from '@discordjs/rest';
import type { DiscordConfig } from './config.js';

/**
 * The `api` option of `@discordjs/rest` and of discord.js's `rest` client option:
 * `DISCORD_API_URL` without the version (the client appends `/v10`), or Discord's own.
 */
export function restOptions(config: Pick<DiscordConfig, 'apiUrl'>): { api?: string } {
  if (!config.apiUrl) return {};
  return { api: config.apiUrl.replace(/\/+$/, '').replace(/\/v\d+$/, '') };
}

/**
 * A REST client alone (no gateway), as workers and the command-registration CLI use.
 * Its own queue handles Discord's rate limits: a 429 is waited out and retried inside it.
 */
export function createRest(config: Pick<DiscordConfig, 'apiUrl' | 'token'>): REST {
  return new REST({ ...restOptions(config), version: '10' }).setToken(config.token);
}
