import { ErrorCode, type WebAPICallError } from '@slack/web-api';
import { PlatformError, kindForStatus, type ErrorKind } from '../../src/core/errors.js';
import { clipAtWord } from '../../src/core/scrub.js';

/** Slack error codes that retrying cannot fix: the bot is not there, or the channel is gone. */
const REFUSED = new Set([
  'not_in_channel',
  'channel_not_found',
  'is_archived',
  'thread_not_found',
  'restricted_action',
  'restricted_action_read_only_channel',
  'restricted_action_thread_only_channel',
  'restricted_action_non_threadable_channel',
  'cannot_reply_to_message',
  'team_access_not_granted',
  'ekm_access_denied',
]);
const UNAUTHORIZED = new Set(['not_authed', 'invalid_auth', 'account_inactive', 'token_revoked', 'token_expired', 'no_permission']);
const FORBIDDEN = new Set(['missing_scope', 'not_allowed_token_type', 'access_denied']);
const SERVER = new Set(['internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']);

/** Why Slack refused, in words an operator can act on. */
const WHY: Record<string, string> = {
  not_in_channel: 'the bot is not a member of the channel: invite it with /invite @<bot name>',
  channel_not_found: 'the channel does not exist or the bot cannot see it (a private channel it was never invited to?)',
  is_archived: 'the channel is archived',
  thread_not_found: 'the thread no longer exists',
  restricted_action: 'the workspace does not let the bot post there',
  invalid_auth: 'Slack does not accept the bot token (SLACK_BOT_TOKEN, or with "Add to Slack" the workspace\'s installation): reinstall the app',
  token_revoked: 'the bot token was revoked (the app was uninstalled, or its tokens revoked): reinstall the app, and update SLACK_BOT_TOKEN if it is set',
  account_inactive: 'the bot user or its token is deactivated (the app was uninstalled, or the workspace deleted)',
  missing_scope: 'the app lacks a scope: reinstall it from adapters/slack/manifest.*.yaml',
};

function kindForCode(code: string): ErrorKind {
  if (REFUSED.has(code)) return 'refused';
  if (UNAUTHORIZED.has(code)) return 'unauthorized';
  if (FORBIDDEN.has(code)) return 'forbidden';
  if (SERVER.has(code)) return 'server_error';
  if (code === 'ratelimited' || code === 'rate_limited') return 'rate_limited';
  return 'bad_request';
}

/** The Slack error code of a failed Web API call (`already_reacted`, ...), if it has one. */
export function slackErrorCode(err: unknown): string | undefined {
  const e = err as Partial<WebAPICallError> | undefined;
  if (e?.code === ErrorCode.PlatformError) return String((e as { data?: { error?: unknown } }).data?.error ?? '');
  if (err instanceof PlatformError) return err.code;
  return undefined;
}

/**
 * Turns whatever a WebClient call threw into a PlatformError the worker's error policy
 * understands. The message names the method and Slack's code; never a token or a payload.
 */
export function toPlatformError(method: string, err: unknown): PlatformError {
  if (err instanceof PlatformError) return err;
  const e = err as { code?: string; data?: { error?: unknown; response_metadata?: { retryAfter?: number } }; retryAfter?: number; statusCode?: number; original?: Error };
  switch (e?.code) {
    case ErrorCode.RateLimitedError: {
      const seconds = typeof e.retryAfter === 'number' && e.retryAfter >= 0 ? e.retryAfter : 1;
      return new PlatformError('slack', 'rate_limited', `Slack ${method}: rate limited (retry after ${seconds} s)`, {
        status: 429,
        retryAfterMs: seconds * 1000,
        code: 'ratelimited',
        cause: err,
      });
    }
    case ErrorCode.PlatformError: {
      const code = clipAtWord(String(e.data?.error ?? ''), 100) || 'unknown_error';
      const kind = kindForCode(code);
      const retryAfter = e.data?.response_metadata?.retryAfter;
      const why = WHY[code];
      return new PlatformError('slack', kind, `Slack ${method}: ${code}${why ? ` (${why})` : ''}`, {
        code,
        ...(kind === 'rate_limited' ? { retryAfterMs: (typeof retryAfter === 'number' ? retryAfter : 1) * 1000 } : {}),
        cause: err,
      });
    }
    case ErrorCode.HTTPError: {
      const status = typeof e.statusCode === 'number' ? e.statusCode : 500;
      return new PlatformError('slack', kindForStatus(status), `Slack ${method}: HTTP ${status}`, { status, cause: err });
    }
    case ErrorCode.RequestError: {
      // The bridge's fetch (src/undici-fetch.ts) reports a failed request as fetch does: a
      // TypeError whose cause is what happened (the timeout's abort among them).
      const cause = (e.original as { cause?: { name?: unknown } } | undefined)?.cause;
      const name = typeof cause?.name === 'string' && e.original?.name === 'TypeError' ? cause.name : (e.original?.name ?? '');
      const timedOut = name === 'TimeoutError' || name === 'AbortError';
      return new PlatformError('slack', timedOut ? 'timeout' : 'network', `Slack ${method}: ${timedOut ? 'timed out' : 'request failed'}`, {
        cause: err,
      });
    }
    default:
      return new PlatformError('slack', 'network', `Slack ${method}: ${(err instanceof Error && clipAtWord(err.message, 200)) || 'failed'}`, {
        cause: err,
      });
  }
}
