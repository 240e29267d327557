import { PlatformError, kindForStatus, type ErrorKind } from '../../src/core/errors.js';
import { clipAtWord } from '../../src/core/scrub.js';

/**
 * Discord error codes that retrying cannot fix: the bot lacks access, the channel or message
 * is gone, or the user cannot be messaged. They become `refused` so the worker gives up at once.
 */
const REFUSALS: ReadonlyMap<number, string> = new Map([
  [10003, 'Unknown Channel'],
  [10008, 'Unknown Message'],
  [50001, 'Missing Access'],
  [50007, 'Cannot send messages to this user'],
  [50013, 'Missing Permissions'],
  [50083, 'Thread is archived'],
  [160002, 'Cannot reply without permission to read message history'],
]);

/**
 * A 401 on a request made with the bot token means Discord no longer accepts DISCORD_TOKEN (it
 * was reset in the Developer Portal, or is wrong). `@discordjs/rest` then drops the token, so
 * every later request of that client fails before it is sent ("Expected token to be set…"),
 * which stops further 401s: Discord bans an IP that makes 10,000 invalid (401, 403, 429) requests
 * in 10 minutes. Both say what to do, in the same words; neither is worth retrying.
 */
export const TOKEN_REFUSED =
  'Discord no longer accepts DISCORD_TOKEN (401 Unauthorized: the bot token was reset or revoked): copy the current token from the ' +
  'Discord Developer Portal (your application → Bot → Reset Token) into DISCORD_TOKEN of every agent-bridge process and restart them';
/** What `@discordjs/rest` throws once it dropped a refused token. */
const TOKEN_DROPPED = /^Expected token to be set for this request/;
/** A 401 for an interaction's webhook token (older than 15 minutes), not the bot token. */
const INVALID_WEBHOOK_TOKEN = 50027;

/** What a 429 without `Retry-After` most likely is. */
const EDGE_429 =
  "not Discord's rate limit but its edge (Cloudflare) or a proxy at DISCORD_API_URL: Discord bars an IP for a while after 10,000 refused (401, 403, 429) requests in 10 minutes";
/** How long such a 429 is waited out before the request is made again. */
const UNSAID_WAIT_MS = 60_000;

interface ApiErrorLike {
  status: number;
  code?: number | string;
  method?: string;
  url?: string;
  message?: string;
  retryAfter?: number;
}

/** Duck-typed on purpose: discord.js (CJS) and this module (ESM) load separate copies of the error classes. */
function looksLikeApiError(err: unknown): err is ApiErrorLike {
  return typeof err === 'object' && err !== null && typeof (err as { status?: unknown }).status === 'number';
}

/** `/channels/123/messages`, with origin, API version and query removed (and so any token). */
function routeOf(url: string | undefined): string {
  if (!url) return '';
  try {
    return new URL(url).pathname.replace(/^\/api(\/v\d+)?/, '');
  } catch {
    return '';
  }
}

/**
 * Turns what `@discordjs/rest` throws into a `PlatformError`. The message names method, route,
 * status and Discord's code; the request body (which holds the reply text) is never attached.
 */
export function toPlatformError(err: unknown, action: string): PlatformError {
  if (err instanceof PlatformError) return err;
  const name = err instanceof Error ? err.name : '';
  // Its name carries the route: `RateLimitError[/channels/:id/messages]`.
  if (name.startsWith('RateLimitError') && typeof (err as ApiErrorLike).retryAfter === 'number') {
    const retryAfterMs = (err as ApiErrorLike).retryAfter!;
    if (retryAfterMs > 0) return new PlatformError('discord', 'rate_limited', `Discord rate limit on ${action}`, { status: 429, retryAfterMs });
    // Not Discord's own limit (rest.ts): its edge or a proxy, which may be barring this IP.
    return new PlatformError('discord', 'rate_limited', `Discord ${action} refused with a 429 that does not say how long to wait (${EDGE_429}); tried again in a minute`, {
      status: 429,
      retryAfterMs: UNSAID_WAIT_MS,
    });
  }
  if (looksLikeApiError(err)) {
    const code = typeof err.code === 'number' ? err.code : Number(err.code);
    if (err.status === 401 && code !== INVALID_WEBHOOK_TOKEN) {
      return new PlatformError('discord', 'unauthorized', `Discord ${action} failed: ${TOKEN_REFUSED}`, { status: 401 });
    }
    const route = `${(err.method ?? '').toUpperCase()} ${routeOf(err.url)}`.trim();
    const refusal = REFUSALS.get(code);
    const kind: ErrorKind = refusal ? 'refused' : kindForStatus(err.status);
    const what = refusal ?? (clipAtWord(err.message ?? '', 200) || `HTTP ${err.status}`);
    return new PlatformError('discord', kind, `Discord ${action} failed (${route}): ${what}`, {
      status: err.status,
      ...(Number.isFinite(code) && code > 0 ? { code: String(code) } : {}),
    });
  }
  if (name === 'AbortError' || name === 'TimeoutError') {
    return new PlatformError('discord', 'timeout', `Discord ${action} timed out`);
  }
  if (err instanceof Error && TOKEN_DROPPED.test(err.message)) {
    return new PlatformError('discord', 'unauthorized', `Discord ${action} not sent: ${TOKEN_REFUSED}`);
  }
  const reason = clipAtWord(err instanceof Error ? err.message : String(err), 200);
  return new PlatformError('discord', 'network', `Discord ${action} failed: ${reason}`, {
    code: (err as { code?: unknown })?.code ? String((err as { code?: unknown }).code) : undefined,
  });
}
