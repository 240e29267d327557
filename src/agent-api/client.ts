import { createUndiciFetch } from '../undici-fetch.js';
import { defaultAgentPool, type AgentPool } from './agent-pool.js';
import { AgentApiError } from '../core/errors.js';
import type { AgentConfig } from '../config/load.js';
import type { Logger } from '../logger.js';
import { callAgent, type HttpDeps } from './http.js';
import { chatReplySchema, credentialResultSchema, instanceListSchema } from './schemas.js';
import type { AgentApi, AgentCallEvent } from './types.js';

/** Exact message when addCredential is called without a dashboard session. */
export const NO_SESSION_MESSAGE = 'adding credentials needs a dashboard session: set AGENT_SESSION_COOKIE';
/** The error `code` of that refusal: callers branch on it, never on the message's wording. */
export const NO_SESSION_CODE = 'no_session';

export interface AgentApiOptions {
  /**
   * The fetch to use.
   * @defaultValue undici's request API on the pool below (see src/undici-fetch.ts)
   */
  fetch?: typeof fetch;
  /**
   * The connection pool of the default fetch.
   * @defaultValue the process's pool, with no cap on connections (see agent-pool.ts)
   */
  pool?: AgentPool;
  /**
   * Bound on a call's wait for a connection, before its own time limit starts.
   * @defaultValue the call's time limit (AGENT_TIMEOUT_MS for chat)
   */
  connectionWaitMs?: number;
  /** Debug line per call (operation, status, duration; never headers or bodies). */
  logger?: Logger;
  /** Called after every call that went to the network, e.g. for latency and status metrics. */
  onCall?: (event: AgentCallEvent) => void;
  /** @defaultValue Date.now */
  now?: () => number;
}

/**
 * The client of the agent service (../shared/agent-chat-api.md §4):
 * - chat: `POST {base_url}/chat` with `X-API-Key`, limit `timeoutMs`;
 * - listInstances: `GET {base_url}/instances` with the key, or the session when no key is set;
 * - addCredential: `POST {origin of base_url}/api/instances/{id}/credentials` with the session only.
 * The session is `AGENT_SESSION_COOKIE` sent verbatim as `Cookie` and/or `AGENT_SESSION_TOKEN`
 * as `Authorization: Bearer`. Calls other than chat are limited by `otherTimeoutMs`.
 */
export function createAgentApi(config: AgentConfig, options: AgentApiOptions = {}): AgentApi {
  const base = config.baseUrl.replace(/\/+$/, '');
  // The credentials path is relative to the host root: any path prefix of base_url is dropped.
  const origin = new URL(base).origin;
  const secrets = [config.apiKey, config.sessionCookie, config.sessionToken].filter((s): s is string => Boolean(s));
  const session = sessionHeaders(config);
  let answeredAt: number | undefined;

  const pool = options.fetch ? undefined : (options.pool ?? defaultAgentPool());
  const deps: HttpDeps = {
    fetch: options.fetch ?? createUndiciFetch(pool!.dispatcher),
    reportsDispatch: pool !== undefined,
    maxResponseBytes: config.maxResponseBytes,
    connectionWaitMs: options.connectionWaitMs,
    now: options.now ?? Date.now,
    answered: (at) => (answeredAt = at),
    logger: options.logger,
    onCall: options.onCall,
  };

  // One object per credential for every call: its header check is then made once (http.ts).
  const apiKeyHeaders = config.apiKey ? { 'x-api-key': config.apiKey } : undefined;

  return {
    // Not async: the call's own promise is the answer (no second promise per call in flight).
    chat(instanceId, message, signal) {
      if (!apiKeyHeaders) return Promise.reject(new AgentApiError('unauthorized', 'chatting needs an API key: set AGENT_API_KEY'));
      return callAgent(deps, {
        operation: 'chat',
        method: 'POST',
        url: `${base}/chat`,
        headers: apiKeyHeaders,
        body: { instanceId, message },
        timeoutMs: config.timeoutMs,
        signal,
        schema: chatReplySchema,
        secrets,
        authHint: 'check AGENT_API_KEY',
        instanceId,
      });
    },

    async listInstances(signal) {
      const headers = apiKeyHeaders ?? session;
      if (!headers) {
        throw new AgentApiError(
          'unauthorized',
          'listing instances needs an API key or a dashboard session: set AGENT_API_KEY or AGENT_SESSION_COOKIE',
        );
      }
      return callAgent(deps, {
        operation: 'listInstances',
        method: 'GET',
        url: `${base}/instances`,
        headers,
        timeoutMs: config.otherTimeoutMs,
        signal,
        schema: instanceListSchema,
        secrets,
        authHint: config.apiKey ? 'check AGENT_API_KEY' : 'check AGENT_SESSION_COOKIE or AGENT_SESSION_TOKEN',
      });
    },

    async addCredential(instanceId, key, value, signal) {
      if (!session) throw new AgentApiError('unauthorized', NO_SESSION_MESSAGE, { code: NO_SESSION_CODE });
      return callAgent(deps, {
        operation: 'addCredential',
        method: 'POST',
        url: `${origin}/api/instances/${instanceSegment(instanceId)}/credentials`,
        headers: session,
        body: { key, value },
        timeoutMs: config.otherTimeoutMs,
        signal,
        schema: credentialResultSchema,
        secrets: [...secrets, value],
        authHint: 'check AGENT_SESSION_COOKIE or AGENT_SESSION_TOKEN',
        instanceId,
      });
    },

    hasSession: async () => session !== undefined,

    lastAnsweredAt: () => answeredAt,

    calls: () => pool?.counts() ?? { waiting: 0, inFlight: 0 },
  };
}

/** The session headers, or undefined when no session is configured. Never carries X-API-Key. */
function sessionHeaders(config: AgentConfig): Record<string, string> | undefined {
  const headers: Record<string, string> = {};
  if (config.sessionCookie) headers.cookie = config.sessionCookie;
  if (config.sessionToken) headers.authorization = `Bearer ${config.sessionToken}`;
  return Object.keys(headers).length > 0 ? headers : undefined;
}

/**
 * The id as one path segment. encodeURIComponent keeps `.` and URL parsers resolve `.`/`..`
 * segments (even as %2E), so those ids would address another path: they are refused.
 */
function instanceSegment(instanceId: string): string {
  if (instanceId === '' || instanceId === '.' || instanceId === '..') {
    throw new AgentApiError('bad_request', `instance id ${JSON.stringify(instanceId)} cannot be used in a URL path`);
  }
  return encodeURIComponent(instanceId);
}
