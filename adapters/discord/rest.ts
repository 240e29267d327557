import { REST, type RESTOptions, type RateLimitData } from '@discordjs/rest';
import type { DiscordConfig } from './config.js';

/**
 * The `api` option of `@discordjs/rest` and of discord.js's `rest` client option:
 * `DISCORD_API_URL` without the version (the client appends `/v10`), or Discord's own.
 */
export function restOptions(config: Pick<DiscordConfig, 'apiUrl'>): Pick<RESTOptions, 'rejectOnRateLimit'> & { api?: string } {
  return {
    rejectOnRateLimit: unsaidWait,
    ...(config.apiUrl ? { api: config.apiUrl.replace(/\/+$/, '').replace(/\/v\d+$/, '') } : {}),
  };
}

/**
 * A 429 that does not say how long to wait (no `Retry-After`: Discord's own always has one, so
 * it comes from in front of Discord, Cloudflare or a proxy) is thrown instead of waited out.
 * `@discordjs/rest` would send the request again at once, as fast as its global limit allows (50
 * a second), each a refused request toward the 10,000 in 10 minutes that get an IP barred.
 * Every wait Discord announces (`retryAfter` > 0) is still waited out inside the client.
 */
function unsaidWait(data: RateLimitData): boolean {
  return !(data.retryAfter > 0);
}

/**
 * A REST client alone (no gateway), as workers and the command-registration CLI use.
 * Its own queue handles Discord's rate limits: a 429 is waited out and retried inside it.
 */
export function createRest(config: Pick<DiscordConfig, 'apiUrl' | 'token'>): REST {
  return new REST({ ...restOptions(config), version: '10' }).setToken(config.token);
}
