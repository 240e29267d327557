import type { Platform } from './conversation.js';
/**
 * Error kinds shared by the agent API client and the platform reply ports. The worker maps
 * them to queue behaviour in one place (src/worker/error-policy.ts).
 */
export type ErrorKind =
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'rate_limited'
  | 'bad_request'
  | 'server_error'
  | 'timeout'
  | 'network'
  | 'invalid_response'
  /** A platform refusal that retrying cannot fix (`not_in_channel`, `is_archived`, ...). */
  | 'refused';

/** `BridgeError.code` of a thread the platform would not let the worker read (rate limited). */
export const THREAD_UNREADABLE = 'thread_unreadable';

const RETRYABLE: ReadonlySet<ErrorKind> = new Set(['rate_limited', 'server_error', 'timeout', 'network']);

export interface BridgeErrorOptions {
  status?: number;
  /** Milliseconds to wait before the next attempt (from Retry-After). */
  retryAfterMs?: number;
  /** Machine-readable code from the remote side, e.g. Slack's `not_in_channel`. */
  code?: string;
  cause?: unknown;
}

/** Base of every error that crosses a network boundary. Messages never contain secrets. */
export class BridgeError extends Error {
  readonly status?: number;
  readonly retryAfterMs?: number;
  readonly code?: string;
  constructor(
    /** `agent`, or the platform whose API failed. */
    readonly source: 'agent' | Platform,
    readonly kind: ErrorKind,
    message: string,
    options: BridgeErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.code = options.code;
  }

  /** Worth trying again later. */
  get retryable(): boolean {
    return RETRYABLE.has(this.kind);
  }
}

/** The agent service refused, failed or answered something that is not in its spec. */
export class AgentApiError extends BridgeError {
  constructor(kind: ErrorKind, message: string, options: BridgeErrorOptions = {}) {
    super('agent', kind, message, options);
  }
}

/**
 * `code` of a failed agent call the service may still have run (and billed): it was sent and
 * its answer never came (a timeout, a connection cut mid-call). Under
 * AGENT_CALL_GUARANTEE=at-most-once such a call is not made again.
 */
export const CALL_MAY_HAVE_RUN = 'call_may_have_run';

/** A chat platform refused or failed a call made to post a reply. */
export class PlatformError extends BridgeError {}

/** Maps an HTTP status to an error kind. */
export function kindForStatus(status: number): ErrorKind {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 408) return 'timeout';
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'server_error';
  return 'bad_request';
}
