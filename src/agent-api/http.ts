import { STATUS_CODES } from 'node:http';
import type { z } from 'zod';
import { AgentApiError, CALL_MAY_HAVE_RUN, kindForStatus } from '../core/errors.js';
import type { Logger } from '../logger.js';
import type { AgentCallEvent, AgentOperation } from './types.js';
import { readableDetail } from './error-message.js';
import { scrub } from '../core/scrub.js';
import { parseRetryAfter } from './retry-after.js';
import { Deadline } from './deadline.js';
import { describeIssues } from './schemas.js';
import { ResponseTooLarge, type UndiciFetchInit } from '../undici-fetch.js';

/** One call of the agent service, as the client describes it. */
export interface AgentRequest<T> {
  operation: AgentOperation;
  method: 'GET' | 'POST';
  url: string;
  /** Authentication headers; content headers are added here. */
  headers: Record<string, string>;
  body?: unknown;
  timeoutMs: number;
  signal?: AbortSignal;
  schema: z.ZodType<T>;
  /** Values that must never appear in an error message. */
  secrets: readonly string[];
  /** Appended to 401/403 messages: which setting to check. */
  authHint: string;
  instanceId?: string;
}

export interface HttpDeps {
  fetch: typeof fetch;
  now: () => number;
  /** Called whenever the service answered with any status. */
  answered: (at: number) => void;
  logger?: Logger;
  onCall?: (event: AgentCallEvent) => void;
  /**
   * The fetch reports when a request got its connection (UndiciFetchInit.onDispatch): the time
   * limit then runs from there, and the wait before it is bounded separately by the same length.
   * Only the agent pool's undici fetch does, and it also takes a CallSignal for the call's abort.
   */
  reportsDispatch: boolean;
  /** Largest answer body read (AGENT_MAX_RESPONSE_BYTES); a larger one fails the call. */
  maxResponseBytes?: number;
  /** Bound on the wait for a connection. @defaultValue the call's own limit */
  connectionWaitMs?: number;
}

/**
 * Sends one request and returns the validated body, or throws AgentApiError (or the caller's
 * abort reason). One async function for the whole exchange: thousands of calls may wait on the
 * agent at once, and each suspended async function holds a frame of its own.
 */
export async function callAgent<T>(deps: HttpDeps, req: AgentRequest<T>): Promise<T> {
  const started = performance.now();
  let status: number | undefined;
  try {
    const headers = requestHeaders(req);
    let response: Response;
    let text: string;
    // The pool's fetch is undici's dispatch: it takes the lighter CallSignal (see there).
    const limit = new Deadline(req.timeoutMs, req.signal, deps.reportsDispatch ? { waitLimitMs: deps.connectionWaitMs ?? req.timeoutMs, forUndici: true } : {});
    const maxBytes = deps.maxResponseBytes;
    try {
      // Redirects are not followed: a redirect to another host would carry X-API-Key along.
      const init: UndiciFetchInit = {
        method: req.method,
        headers,
        body: req.body === undefined ? undefined : JSON.stringify(req.body),
        signal: limit.signal,
        redirect: 'manual',
        maxBytes,
        onDispatch: limit,
      };
      response = await deps.fetch(req.url, init);
      status = response.status;
      deps.answered(deps.now());
      text = response.ok ? await response.text() : await response.text().catch(() => '');
      // A fetch that cannot stop early (one passed in by a test) is still held to the limit.
      if (maxBytes !== undefined && text.length > maxBytes / 4 && Buffer.byteLength(text) > maxBytes) {
        throw new ResponseTooLarge(maxBytes);
      }
    } catch (err) {
      if (err instanceof ResponseTooLarge) throw tooLarge(err, response!);
      // A 2xx head came: the service ran the call (and billed it). Its body, cut off, late or
      // undecodable, is lost; asking again would bill again, so this is given up, not retried.
      if (status !== undefined && status >= 200 && status < 300 && !req.signal?.aborted) throw unreadableAnswer(err, status, req);
      throw transportError(err, req, limit, deps);
    } finally {
      limit.dispose();
    }
    const value = validAnswer(response, text, req, deps.now());
    report(deps, req, started, status);
    return value;
  } catch (err) {
    report(deps, req, started, status, err instanceof AgentApiError ? err : undefined);
    throw err;
  }
}

/** Authentication header sets already checked (the client passes the same object for each call). */
const validAuthHeaders = new WeakSet<Record<string, string>>();

/** The request's headers: content headers and the client's authentication, checked once per set. */
function requestHeaders(req: AgentRequest<unknown>): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'agent-bridge', ...req.headers };
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  if (!validAuthHeaders.has(req.headers)) {
    try {
      new Headers(req.headers);
    } catch {
      // The validation error quotes the offending value, which is one of the secrets.
      throw new AgentApiError('bad_request', `a configured agent credential is not a valid HTTP header value (${req.authHint})`);
    }
    validAuthHeaders.add(req.headers);
  }
  return headers;
}

/** The answer's body, parsed and checked against the operation's schema; a status error otherwise. */
function validAnswer<T>(response: Response, text: string, req: AgentRequest<T>, now: number): T {
  if (!response.ok) throw statusError(response, text, req, now);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new AgentApiError('invalid_response', `agent service answered ${response.status} with a body that is not JSON`, {
      status: response.status,
    });
  }
  const parsed = req.schema.safeParse(data);
  if (!parsed.success) {
    throw new AgentApiError(
      'invalid_response',
      `agent service answered ${response.status} with an unexpected body (${describeIssues(parsed.error)})`,
      { status: response.status },
    );
  }
  return parsed.data;
}

function transportError(err: unknown, req: AgentRequest<unknown>, limit: Deadline, deps: HttpDeps): unknown {
  if (req.signal?.aborted) {
    const reason: unknown = req.signal.reason;
    // The caller cancelled: hand back its own reason, unless that reason is itself a deadline.
    if (!(reason instanceof DOMException && reason.name === 'TimeoutError')) return reason;
    return new AgentApiError('timeout', `agent service call was cut short by the caller's deadline`);
  }
  if (limit.timedOut === 'wait') {
    const waited = deps.connectionWaitMs ?? req.timeoutMs;
    return new AgentApiError('timeout', `no connection to the agent service came free within ${waited} ms`);
  }
  if (limit.timedOut === 'call') {
    return new AgentApiError('timeout', `agent service did not answer within ${req.timeoutMs} ms`, { code: CALL_MAY_HAVE_RUN });
  }
  const cause = (err as { cause?: { code?: unknown; name?: unknown } } | undefined)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : typeof cause?.name === 'string' ? cause.name : undefined;
  const host = new URL(req.url).host;
  const message = `could not reach the agent service at ${host}${code ? ` (${code})` : ''}`;
  const sent = !(code && NOT_CONNECTED.has(code));
  return new AgentApiError('network', scrub(message, req.secrets), { cause: err, ...(sent ? { code: CALL_MAY_HAVE_RUN } : {}) });
}

/** The service answered `status` (2xx) and its body could not be read: not retryable (see callAgent). */
function unreadableAnswer(err: unknown, status: number, req: AgentRequest<unknown>): AgentApiError {
  const cause = (err as { cause?: { code?: unknown; name?: unknown } } | undefined)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : typeof cause?.name === 'string' ? cause.name : undefined;
  const message = `agent service answered ${status} but its body could not be read${code ? ` (${code})` : ''}; not asked again, as it ran the call`;
  return new AgentApiError('invalid_response', scrub(message, req.secrets), { status, cause: err, code: ANSWER_UNREADABLE });
}

/** `code` of the AgentApiError for a 2xx answer whose body was cut off or could not be decoded. */
export const ANSWER_UNREADABLE = 'answer_unreadable';

/** Connection errors after which the request surely never reached the service. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** Not retryable: the same question would bring the same oversized answer. */
function tooLarge(err: ResponseTooLarge, response: Response): AgentApiError {
  return new AgentApiError(
    'invalid_response',
    `agent service answered ${response.status} with a body larger than AGENT_MAX_RESPONSE_BYTES (${err.limitBytes} bytes); it was not read`,
    { status: response.status, code: RESPONSE_TOO_LARGE },
  );
}

/** `code` of the AgentApiError for an answer over AGENT_MAX_RESPONSE_BYTES. */
export const RESPONSE_TOO_LARGE = 'response_too_large';

function statusError(response: Response, text: string, req: AgentRequest<unknown>, now: number): AgentApiError {
  const status = response.status;
  const kind = kindForStatus(status);
  // Absent or unreadable: undefined, and the worker's wait grows with each 429 (error-policy.ts).
  // An HTTP-date is read against the service's own clock (its Date header) when it sent one:
  // this machine's may be minutes off, and a 30 s wait would read as a quota used up.
  const serverNow = Date.parse(response.headers.get('date') ?? '');
  const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), Number.isNaN(serverNow) ? now : serverNow);

  let detail = readableDetail(text, response.headers.get('content-type'), req.secrets);
  if (status >= 300 && status < 400) {
    const location = scrub(response.headers.get('location') ?? '', req.secrets).slice(0, 200);
    detail = `redirect${location ? ` to ${location}` : ''} not followed; check AGENT_API_BASE_URL`;
  }
  let message = `agent service answered ${status}`;
  message += detail ? `: ${detail}` : STATUS_CODES[status] ? ` ${STATUS_CODES[status]}` : '';
  if (status === 401 || status === 403) message += ` (${req.authHint})`;
  return new AgentApiError(kind, message, { status, retryAfterMs, ...(GATEWAY_LOST_ANSWER.has(status) ? { code: CALL_MAY_HAVE_RUN } : {}) });
}

/**
 * A gateway's answer for a request it forwarded and got no (valid) answer to: 502 (the service
 * cut the connection or answered garbage) and 504 (it did not answer in time). The service may
 * have run and billed the call, as after a timeout of our own: at-most-once does not call again.
 */
const GATEWAY_LOST_ANSWER: ReadonlySet<number> = new Set([502, 504]);

function report(deps: HttpDeps, req: AgentRequest<unknown>, started: number, status?: number, error?: AgentApiError): void {
  const event: AgentCallEvent = {
    operation: req.operation,
    instanceId: req.instanceId,
    status,
    kind: error?.kind,
    durationMs: Math.round(performance.now() - started),
  };
  const text = error ? `agent ${req.operation} failed: ${error.message}` : `agent ${req.operation} ok`;
  deps.logger?.debug({ agentCall: event }, text);
  try {
    deps.onCall?.(event);
  } catch {
    // A metrics hook must never turn a successful call into a failure.
  }
}
