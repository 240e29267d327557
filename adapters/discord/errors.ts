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
  if (name === 'RateLimitError' && typeof (err as ApiErrorLike).retryAfter === 'number') {
    const retryAfterMs = (err as ApiErrorLike).retryAfter;
    return new PlatformError('discord', 'rate_limited', `Discord rate limit on ${action}`, { status: 429, retryAfterMs });
  }
  if (looksLikeApiError(err)) {
    const code = typeof err.code === 'number' ? err.code : Number(err.code);
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
  const reason = clipAtWord(err instanceof Error ? err.message : String(err), 200);
  return new PlatformError('discord', 'network', `Discord ${action} failed: ${reason}`, {
    code: (err as { code?: unknown })?.code ? String((err as { code?: unknown }).code) : undefined,
  });
}
