import { Client, Events, GatewayIntentBits, Partials, type ClientOptions } from 'discord.js';
import type { IdentifyThrottler } from './identify-throttler.js';
import type { DiscordConfig } from './config.js';
import { restOptions } from './rest.js';

/** Gateway close code for a privileged intent the application has not been granted. */
export const DISALLOWED_INTENTS_CLOSE = 4014;

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
 * before its first message). discord.js asks REST for the gateway URL, so `DISCORD_API_URL`
 * points both at a proxy or emulator.
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
  return new Client({
    intents: gatewayIntents(contentIntent),
    partials: [Partials.Channel],
    // 'auto': Discord's recommended shard count, all in this process (required past 2,500 guilds).
    // Otherwise this process owns `ids` of `count`; other processes own the rest.
    ...(plan === 'auto' ? { shards: 'auto' as const } : { shards: plan.ids, shardCount: plan.count }),
    ws,
    rest: restOptions(config),
    // Nothing the gateway process sends may ping anyone.
    allowedMentions: { parse: [], repliedUser: false },
  });
}

/**
 * Logs in and waits until the client is ready (READY plus a GUILD_CREATE for every guild).
 * Throws `DisallowedIntentsError` when the gateway closes with 4014; the client is destroyed then.
 */
export async function loginAndWait(client: Client, token: string): Promise<void> {
  let disallowed = false;
  const onDisconnect = (event: { code: number }) => {
    if (event.code === DISALLOWED_INTENTS_CLOSE) disallowed = true;
  };
  client.on(Events.ShardDisconnect, onDisconnect);
  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  try {
    await client.login(token);
  } catch (err) {
    if (disallowed || /disallowed intents/i.test(err instanceof Error ? err.message : '')) throw new DisallowedIntentsError();
    throw err;
  } finally {
    client.off(Events.ShardDisconnect, onDisconnect);
  }
  if (!client.isReady()) await ready;
}

/** Node and undici codes of a connection that failed or dropped: worth trying again. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE']);

/** A failed connect either waits for Discord to come back (`retry`) or stops start-up with `error`. */
export type StartFailure = { retry: true; reason: string } | { retry: false; error: Error };

/**
 * Sorts a failed connect. Discord's 5xx and 429 and network errors pass; anything else (a
 * refused token, a gateway close code, a setting) stops start-up, as before.
 */
export function startFailure(err: unknown, config: Pick<DiscordConfig, 'apiUrl'>): StartFailure {
  const e = (err ?? {}) as { status?: unknown; code?: unknown; name?: unknown; message?: unknown; cause?: { code?: unknown } };
  const message = typeof e.message === 'string' ? e.message : String(err);
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
