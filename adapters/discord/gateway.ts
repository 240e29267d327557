import { Client, Events, GatewayIntentBits, Partials, type ClientOptions } from 'discord.js';
import { gatewayCacheOptions, sweepIdleDirectMessages } from './gateway-cache.js';
import type { IdentifyThrottler } from './identify-throttler.js';
import type { DiscordConfig } from './config.js';
import { restOptions } from './rest.js';
import { SessionStartLimitError, sessionStartLimitOf } from './session-limit.js';

/** Gateway close code for a privileged intent the application has not been granted. */
export const DISALLOWED_INTENTS_CLOSE = 4014;

const TOKEN_FIX = 'copy the bot token from the Discord Developer Portal (your application → Bot → Reset Token) into DISCORD_TOKEN';

/**
 * Gateway close codes that reconnecting cannot fix (4014 aside: the adapter falls back to
 * mention-only), each with the setting to change.
 */
const DEFINITIVE_CLOSES: ReadonlyMap<number, string> = new Map([
  [4004, `Discord did not accept DISCORD_TOKEN (gateway close 4004, authentication failed): ${TOKEN_FIX}`],
  [4010, 'Discord refused a shard (gateway close 4010, invalid shard): DISCORD_SHARD_IDS must list shards below DISCORD_SHARD_COUNT, the same count in every process'],
  [
    4011,
    'Discord requires more shards for this bot (gateway close 4011, sharding is required): set DISCORD_SHARD_COUNT to auto ' +
      "(Discord's recommended count) or at least that count, and DISCORD_SHARD_IDS to match",
  ],
  [4012, 'Discord refused the gateway API version (close 4012): DISCORD_API_URL must point at Discord API v10 (https://discord.com/api), or leave it unset'],
  [4013, 'Discord refused the gateway intents (close 4013, invalid intents): if DISCORD_API_URL is set, check that it points at Discord or a faithful proxy'],
]);

/**
 * What to fix for a gateway close code no reconnect can get past (the token reset in the portal
 * while the bridge runs: 4004), or undefined for the others.
 */
export function definitiveCloseReason(code: number): string | undefined {
  return DEFINITIVE_CLOSES.get(code);
}

/** Discord refused the connection for a reason only a setting can fix; the message names it. */
export class DiscordSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DiscordSetupError';
  }
}

/** The gateway refused the MessageContent intent (close 4014). */
export class DisallowedIntentsError extends Error {
  constructor() {
    super('Discord refused a privileged intent (gateway close 4014)');
    this.name = 'DisallowedIntentsError';
  }
}

export function gatewayIntents(contentIntent: boolean): GatewayIntentBits[] {
  const intents = [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.DirectMessages];
  if (contentIntent) intents.push(GatewayIntentBits.MessageContent);
  return intents;
}

/** The shards one process runs: all (Discord's recommended count), or `ids` out of `count`. */
export type ShardPlan = { ids: number[]; count: number } | 'auto';

export interface GatewayClientOptions {
  shards?: ShardPlan;
  /** Paces IDENTIFYs across processes (see RedisIdentifyThrottler); discord.js's own otherwise. */
  identifyThrottler?: (maxConcurrency: number) => IdentifyThrottler;
}

/**
 * A discord.js client for ingress. DMs need `Partials.Channel` (the DM channel is not cached
 * before its first message). `Partials.Message`: without it discord.js drops MESSAGE_UPDATE of a
 * message no longer cached (over 50 newer in its channel, or an hour old), so the edit of a
 * question waiting behind a long queue would never reach the ingress (see message-edit.ts).
 * discord.js asks REST for the gateway URL, so `DISCORD_API_URL` points both at a proxy or emulator.
 */
export function createGatewayClient(config: Pick<DiscordConfig, 'apiUrl'>, contentIntent: boolean, options: GatewayClientOptions = {}): Client {
  const plan = options.shards ?? 'auto';
  const throttler = options.identifyThrottler;
  const ws: ClientOptions['ws'] = throttler
    ? {
        // Same source of max_concurrency as discord.js's default throttler.
        buildIdentifyThrottler: async (manager) =>
          throttler((await manager.fetchGatewayInformation()).session_start_limit.max_concurrency),
      }
    : {};
  const client = new Client({
    intents: gatewayIntents(contentIntent),
    partials: [Partials.Channel, Partials.Message],
    // 'auto': Discord's recommended shard count, all in this process (required past 2,500 guilds).
    // Otherwise this process owns `ids` of `count`; other processes own the rest.
    ...(plan === 'auto' ? { shards: 'auto' as const } : { shards: plan.ids, shardCount: plan.count }),
    ws,
    rest: restOptions(config),
    // Nothing the gateway process sends may ping anyone.
    allowedMentions: { parse: [], repliedUser: false },
    // Bounded: users, members and messages seen would otherwise stay for the life of the process.
    ...gatewayCacheOptions(),
  });
  return sweepIdleDirectMessages(client);
}

/**
 * Logs in and waits until the client is ready (READY plus a GUILD_CREATE for every guild).
 * Throws `DisallowedIntentsError` when the gateway closes with 4014, `DiscordSetupError` for the
 * other close codes no retry can fix, `SessionStartLimitError` when today's session starts are
 * used up; the client is destroyed then.
 */
export async function loginAndWait(client: Client, token: string): Promise<void> {
  let closeCode: number | undefined;
  const onDisconnect = (event: { code: number }) => {
    closeCode = event.code;
  };
  client.on(Events.ShardDisconnect, onDisconnect);
  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  try {
    await client.login(token);
  } catch (err) {
    if (closeCode === DISALLOWED_INTENTS_CLOSE || /disallowed intents/i.test(err instanceof Error ? err.message : '')) throw new DisallowedIntentsError();
    const definitive = closeCode === undefined ? undefined : DEFINITIVE_CLOSES.get(closeCode);
    if (definitive) throw new DiscordSetupError(definitive);
    throw sessionStartLimitOf(err) ?? err;
  } finally {
    client.off(Events.ShardDisconnect, onDisconnect);
  }
  if (!client.isReady()) await ready;
}

/** Node and undici codes of a connection that failed or dropped: worth trying again. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE']);

/**
 * A failed connect either waits for Discord to come back (`retry`; `sessionLimit` when the wait
 * is for the daily session-start limit to reset) or stops start-up with `error`.
 */
export type StartFailure = { retry: true; reason: string; sessionLimit?: SessionStartLimitError } | { retry: false; error: Error };

/**
 * Sorts a failed connect. Discord's 5xx and 429, network errors and a used-up session-start
 * limit pass; a refused token and the close codes above are settings to fix. Anything unknown
 * stops start-up, as before.
 */
export function startFailure(err: unknown, config: Pick<DiscordConfig, 'apiUrl'>): StartFailure {
  const e = (err ?? {}) as { status?: unknown; code?: unknown; name?: unknown; message?: unknown; cause?: { code?: unknown } };
  const message = typeof e.message === 'string' ? e.message : String(err);
  if (e.status === 401 || e.code === 'TokenInvalid') {
    return { retry: false, error: new DiscordSetupError(`Discord did not accept DISCORD_TOKEN (${message}): ${TOKEN_FIX}`) };
  }
  const sessionLimit = sessionStartLimitOf(err);
  if (sessionLimit) return { retry: true, reason: sessionLimit.message, sessionLimit };
  if (typeof e.name === 'string' && e.name.startsWith('RateLimitError')) {
    // A 429 without Retry-After, thrown instead of retried at once (rest.ts): wait with the backoff.
    return { retry: true, reason: "Discord answered 429 without saying how long to wait (its edge, Cloudflare, or a proxy at DISCORD_API_URL, not Discord's rate limit)" };
  }
  if (typeof e.status === 'number' && (e.status === 429 || e.status >= 500)) {
    return { retry: true, reason: `Discord answered ${e.status} (${message})` };
  }
  const network = [e.code, e.cause?.code].some((c) => typeof c === 'string' && (NETWORK_CODES.has(c) || c.startsWith('UND_ERR_')));
  if (network || e.name === 'AbortError' || e.name === 'TimeoutError') {
    // An address the operator set is the likeliest culprit: name it.
    const where = config.apiUrl ? ` at DISCORD_API_URL=${config.apiUrl}` : '';
    const hint = config.apiUrl ? ': check DISCORD_API_URL, or leave it unset to use Discord itself' : '';
    return { retry: true, reason: `Discord is not reachable${where} (${message})${hint}` };
  }
  return { retry: false, error: err instanceof Error ? err : new Error(message) };
}
