import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Instance } from '../agent-api/types.js';
import type { Endpoint } from './emulator-faults.js';
import { bearerToken, cookieMatches, isRecord, sendJson } from './emulator-http.js';

/** What the endpoint handlers read and change: the emulated account. */
export interface AccountState {
  apiKey: string;
  sessionCookie?: string;
  sessionToken?: string;
  instances: Instance[];
  /** Stored credentials: instance id → key → value. */
  credentials: Map<string, Map<string, string>>;
  reply: (instanceId: string, message: string) => string | Promise<string>;
  nextMessageId: () => string;
}

export interface Route {
  endpoint: Endpoint;
  method: 'GET' | 'POST';
  /** Path parameter, decoded (credentials); undefined when it does not decode. */
  instanceId?: string;
}

const CREDENTIALS_PATH = /^\/api\/instances\/([^/]+)\/credentials$/;

/** The spec's endpoint for a raw path (percent-encoding kept), if any. */
export function routeOf(rawPath: string): Route | undefined {
  if (rawPath === '/api/v1/chat') return { endpoint: 'chat', method: 'POST' };
  if (rawPath === '/api/v1/instances') return { endpoint: 'instances', method: 'GET' };
  const match = CREDENTIALS_PATH.exec(rawPath);
  if (!match?.[1]) return undefined;
  let instanceId: string | undefined;
  try {
    instanceId = decodeURIComponent(match[1]);
  } catch {
    instanceId = undefined;
  }
  return { endpoint: 'credentials', method: 'POST', instanceId };
}

function hasSession(req: IncomingMessage, state: AccountState): boolean {
  if (cookieMatches(req.headers.cookie, state.sessionCookie)) return true;
  const token = bearerToken(req.headers.authorization);
  return token !== undefined && state.sessionToken !== undefined && token === state.sessionToken;
}

function apiKeyOf(req: IncomingMessage): string | undefined {
  const value = req.headers['x-api-key'];
  return Array.isArray(value) ? value[0] : value;
}

/** The spec's `Content-Type: application/json` (a charset parameter tolerated). */
function sendsJson(req: IncomingMessage): boolean {
  return /^application\/json\s*(?:;\s*charset=utf-8\s*)?$/i.test(req.headers['content-type'] ?? '');
}

/** A JSON object with exactly these string fields (the spec names no others). */
function hasExactly<F extends string>(json: unknown, fields: readonly F[]): json is Record<F, string> {
  if (!isRecord(json)) return false;
  const keys = Object.keys(json);
  return keys.length === fields.length && fields.every((f) => typeof (json as Record<string, unknown>)[f] === 'string');
}

/**
 * What the spec allows of a request's shape beyond its path, method and credentials (§4): POSTs
 * carry `Content-Type: application/json` and a body of the spec's fields only, the listing has no
 * body and no endpoint takes a query. The refusal (status and reason) of the first breach.
 */
export function shapeRefusal(req: IncomingMessage, route: Route, rawQuery: string | undefined, body: string): { status: number; error: string } | undefined {
  if (rawQuery !== undefined) return { status: 400, error: 'the agent API takes no query parameters' };
  if (route.method === 'GET') return body.length > 0 ? { status: 400, error: 'GET /api/v1/instances takes no request body' } : undefined;
  if (!sendsJson(req)) return { status: 415, error: 'Content-Type must be application/json' };
  return undefined;
}

/** POST /api/v1/chat: API key only. */
export async function handleChat(req: IncomingMessage, res: ServerResponse, json: unknown, state: AccountState): Promise<void> {
  const key = apiKeyOf(req);
  if (!key) return sendJson(res, 401, { error: 'missing API key: send it in the X-API-Key header' });
  if (key !== state.apiKey) return sendJson(res, 401, { error: 'invalid API key' });
  if (!hasExactly(json, ['instanceId', 'message']) || json.instanceId === '') {
    return sendJson(res, 400, { error: 'body must be a JSON object with string fields instanceId and message (and no others)' });
  }
  const instance = state.instances.find((i) => i.id === json.instanceId);
  if (!instance) return sendJson(res, 404, { error: 'instance not found' });
  // The spec names no behaviour for other states; the emulator refuses to chat with a stopped instance.
  if (instance.status !== 'running') return sendJson(res, 409, { error: `instance ${instance.id} is ${instance.status}` });
  let response: string;
  try {
    response = await state.reply(instance.id, json.message);
  } catch {
    return sendJson(res, 500, { error: 'the agent failed to answer' });
  }
  sendJson(res, 200, { response, messageId: state.nextMessageId() });
}

/** GET /api/v1/instances: API key or session. */
export function handleInstances(req: IncomingMessage, res: ServerResponse, state: AccountState): void {
  const key = apiKeyOf(req);
  if ((key !== undefined && key === state.apiKey) || hasSession(req, state)) return sendJson(res, 200, state.instances);
  const presented = key !== undefined || req.headers.cookie !== undefined || req.headers.authorization !== undefined;
  sendJson(res, 401, { error: presented ? 'invalid API key or session' : 'authentication required' });
}

/** POST /api/instances/{id}/credentials: session only; an API key alone is refused. */
export function handleCredentials(req: IncomingMessage, res: ServerResponse, route: Route, json: unknown, state: AccountState): void {
  if (!hasSession(req, state)) return sendJson(res, apiKeyOf(req) !== undefined ? 403 : 401, { error: 'session required' });
  if (route.instanceId === undefined) return sendJson(res, 400, { error: 'malformed instance id' });
  const instance = state.instances.find((i) => i.id === route.instanceId);
  if (!instance) return sendJson(res, 404, { error: 'instance not found' });
  if (!hasExactly(json, ['key', 'value']) || json.key === '') {
    return sendJson(res, 400, { error: 'body must be a JSON object with string fields key and value (and no others)' });
  }
  let stored = state.credentials.get(instance.id);
  if (!stored) state.credentials.set(instance.id, (stored = new Map()));
  stored.set(json.key, json.value);
  sendJson(res, 200, { success: true, key: json.key });
}
