import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { METHOD_SCOPES, METHODS, type MethodResult, type Params } from './methods.js';
import { findPings, type HeldCall, type RecordedCall, type SlackState } from './state.js';
import { validateBlocks } from './validate.js';
import type { EmulatedInstall } from './oauth.js';

/** Methods that take the app-level token (xapp-) instead of the bot token. */
const APP_TOKEN_METHODS = new Set(['apps.connections.open']);

export interface WebApiServer {
  server: Server;
  /** `http://127.0.0.1:PORT/api/`, what SLACK_API_URL is set to. */
  apiUrl: string;
  baseUrl: string;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseParams(raw: string, contentType: string | undefined): Params {
  if (contentType?.includes('application/json')) {
    try {
      const json = JSON.parse(raw) as Record<string, unknown>;
      return Object.fromEntries(Object.entries(json).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
    } catch {
      return {};
    }
  }
  return Object.fromEntries(new URLSearchParams(raw));
}

function send(res: ServerResponse, status: number, body: MethodResult | string, headers: Record<string, string> = {}) {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json; charset=utf-8', ...headers });
  res.end(text);
}

/**
 * Slack's Web API on 127.0.0.1: checks the bearer token, serves injected faults first, runs
 * the method, and records every call with what it answered.
 */
export async function startWebApi(state: SlackState, extra: Record<string, (p: Params) => MethodResult> = {}): Promise<WebApiServer> {
  const server = createServer((req, res) => {
    void handle(req, res).catch((err: Error) => send(res, 500, `emulator error: ${err.message}`));
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const rawBody = await readBody(req);
    // Whose installed token made the call (set once the token is read; records name the team).
    const caller: { install?: EmulatedInstall | undefined } = {};
    const params = parseParams(rawBody, req.headers['content-type']);
    const authorization = typeof req.headers.authorization === 'string' ? req.headers.authorization : undefined;
    const record = (method: string, status: number, response: MethodResult, held?: boolean): RecordedCall => {
      const call: RecordedCall = { method, params, rawBody, authorization, status, response, pings: findPings(Object.values(params).join('\n')), at: Date.now(), ...(held ? { held } : {}), ...(caller.install ? { team: caller.install.isEnterpriseInstall ? caller.install.enterpriseId : caller.install.teamId } : {}) };
      state.record(call);
      return call;
    };

    const respondMatch = /^\/respond\/([A-Za-z0-9]+)$/.exec(url.pathname);
    if (req.method === 'POST' && respondMatch) return responseUrl(respondMatch[1]!, params, res, record);

    const apiMatch = /^\/api\/([a-zA-Z0-9.]+)$/.exec(url.pathname);
    if (req.method !== 'POST' || !apiMatch) return send(res, 404, 'not found');
    const method = apiMatch[1]!;

    // OAuth's token exchange authenticates with the client ID and secret, not a token.
    if (method === 'oauth.v2.access' && state.oauth) {
      const basic = authorization?.startsWith('Basic ') ? authorization.slice(6) : undefined;
      const answer = state.oauth.access(params, basic);
      return reply(method, 200, 'ok' in answer ? (answer as MethodResult) : { ok: true, ...answer });
    }
    const bearer = authorization?.startsWith('Bearer ') ? authorization.slice(7) : params.token;
    const expected = APP_TOKEN_METHODS.has(method) ? state.identity.appToken : state.identity.botToken;
    const install = bearer && !APP_TOKEN_METHODS.has(method) ? state.oauth?.installFor(bearer) : undefined;
    caller.install = install;
    if (!bearer) return reply(method, 200, { ok: false, error: 'not_authed' });
    // A valid token of the other kind (the bot token for apps.connections.open, the app-level
    // token for a bot method) is refused for its type, as Slack does, not as unknown.
    const otherKind = APP_TOKEN_METHODS.has(method) ? state.identity.botToken : state.identity.appToken;
    if (bearer === otherKind && !install) return reply(method, 200, { ok: false, error: 'not_allowed_token_type' });
    if (bearer !== expected && !install) return reply(method, 200, { ok: false, error: 'invalid_auth' });
    if (install && method === 'auth.test') {
      return reply(method, 200, {
        ok: true,
        url: `https://${install.teamId.toLowerCase()}.emulated.slack.com/`,
        team: install.teamName,
        user: 'agent-bridge',
        team_id: install.teamId,
        user_id: state.identity.botUserId,
        bot_id: state.identity.botId,
        ...(install.enterpriseId ? { enterprise_id: install.enterpriseId } : {}),
        is_enterprise_install: install.isEnterpriseInstall,
      });
    }

    const fault = state.takeFault(method);
    if (fault) {
      if (fault.error === 'ratelimited') {
        return reply(method, 429, { ok: false, error: 'ratelimited' }, { 'Retry-After': String(fault.retryAfterSeconds ?? 1) });
      }
      const http = /^http_(\d{3})$/.exec(fault.error);
      if (http) {
        const status = Number(http[1]);
        record(method, status, { ok: false, error: fault.error });
        return send(res, status, 'Slack is having trouble (emulated)');
      }
      return reply(method, 200, { ok: false, error: fault.error });
    }

    const postWait = postLimitWait(state, method, params.channel);
    if (postWait !== undefined) return reply(method, 429, { ok: false, error: 'ratelimited' }, { 'Retry-After': String(postWait) });
    const readWait = readLimitWait(state, method);
    if (readWait !== undefined) return reply(method, 429, { ok: false, error: 'ratelimited' }, { 'Retry-After': String(readWait) });

    // The network and Slack's own time, before the method runs (and, for a post, clears a status line).
    const latency = state.latency?.(method, params) ?? 0;
    if (latency > 0) await new Promise((r) => setTimeout(r, latency));
    const impl = extra[method] ?? METHODS[method];
    if (!impl) return reply(method, 200, { ok: false, error: 'unknown_method' });
    const needed = METHOD_SCOPES[method]?.(params);
    if (needed && !state.identity.scopes.includes(needed)) {
      return reply(method, 200, { ok: false, error: 'missing_scope', needed, provided: state.identity.scopes.join(',') });
    }
    const result = memberOfCaller(method, params, impl(params, state), install);
    const body = 'ok' in result ? result : { ok: true, ...result };
    if (state.takeHold(method, params)) return holdAnswer(method, body);
    return reply(method, 200, body);

    /** The work is done (a post is stored); the answer waits until released, or forever. */
    function holdAnswer(m: string, answer: MethodResult) {
      const call = record(m, 200, answer, true);
      let sent = false;
      const held: HeldCall = {
        call,
        release() {
          if (sent) return;
          sent = true;
          const i = state.heldCalls.indexOf(held);
          if (i >= 0) state.heldCalls.splice(i, 1);
          if (!res.destroyed) send(res, 200, answer);
        },
      };
      state.addHeld(held);
      // The client gave up or died: nothing is held for it any more.
      res.once('close', () => {
        if (sent) return;
        sent = true;
        const i = state.heldCalls.indexOf(held);
        if (i >= 0) state.heldCalls.splice(i, 1);
      });
    }

    function reply(m: string, status: number, body: MethodResult, headers?: Record<string, string>) {
      record(m, status, body);
      send(res, status, body, headers);
    }
  }

  /**
   * "Add to Slack": a user given no workspace of their own is a member of the workspace whose
   * token asked (users.info answers with that `team_id`, and its organisation on Grid).
   */
  function memberOfCaller(method: string, params: Params, result: MethodResult, install: EmulatedInstall | undefined): MethodResult {
    const user = result.user as Record<string, unknown> | undefined;
    if (method !== 'users.info' || !install || !user || state.users.get(params.user ?? '')?.teamId) return result;
    const enterprise = install.enterpriseId ? { enterprise_user: { id: user.id, enterprise_id: install.enterpriseId, is_admin: false, is_owner: false, teams: [install.teamId] } } : {};
    return { ...result, user: { ...user, team_id: install.teamId, ...enterprise } };
  }

  function responseUrl(id: string, params: Params, res: ServerResponse, record: (m: string, s: number, r: MethodResult) => void) {
    const entry = state.responseUrls.get(id);
    // Slack allows five posts per response_url within 30 minutes.
    if (!entry || entry.uses >= 5) {
      record('response_url', 404, { ok: false, error: 'expired_url' });
      return send(res, 404, 'expired_url');
    }
    const problem = params.blocks ? validateBlocks(params.blocks) : undefined;
    if (problem || (!params.text && !params.blocks)) {
      record('response_url', 400, { ok: false, error: problem?.error ?? 'no_text' });
      return send(res, 400, problem?.error ?? 'no_text');
    }
    entry.uses += 1;
    record('response_url', 200, { ok: true, id });
    return send(res, 200, 'ok');
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    server,
    baseUrl,
    apiUrl: `${baseUrl}/api/`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Seconds to wait under `state.readLimits` (one history/replies call per window), or undefined to go ahead. */
function readLimitWait(state: SlackState, method: string): number | undefined {
  const limits = state.readLimits;
  if (!limits || (method !== 'conversations.history' && method !== 'conversations.replies')) return undefined;
  const now = Date.now();
  const last = limits.lastCall.get(method);
  if (last !== undefined && now - last < limits.windowMs) return Math.max(1, Math.ceil((last + limits.windowMs - now) / 1000));
  limits.lastCall.set(method, now);
  return undefined;
}

/** Seconds to wait under `state.postLimits` (chat.postMessage per channel), or undefined to go ahead (a post taken from the bucket). */
function postLimitWait(state: SlackState, method: string, channel: string | undefined): number | undefined {
  const limits = state.postLimits;
  if (!limits || method !== 'chat.postMessage' || !channel) return undefined;
  const now = Date.now();
  const bucket = limits.buckets.get(channel) ?? { tokens: limits.burst, at: now };
  bucket.tokens = Math.min(limits.burst, bucket.tokens + (now - bucket.at) / limits.perChannelMs);
  bucket.at = now;
  limits.buckets.set(channel, bucket);
  if (bucket.tokens >= 1) {
    bucket.tokens -= 1;
    return undefined;
  }
  return Math.max(1, Math.ceil(((1 - bucket.tokens) * limits.perChannelMs) / 1000));
}
