import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Instance } from '../agent-api/types.js';
import { DEMO_API_KEY, DEMO_INSTANCES, DEMO_SESSION_COOKIE, DEMO_SESSION_TOKEN, demoReply } from './demo-instances.js';
import { FaultPlan, type Endpoint, type FailureSpec, type FaultScope } from './emulator-faults.js';
import { parseJson } from '../json.js';
import { BodyTooLarge, isRecord, readBody, send, sendFailure, sendHuge, sendJson } from './emulator-http.js';
import { handleChat, handleCredentials, handleInstances, routeOf, shapeRefusal, type AccountState } from './emulator-routes.js';
import { handleControl } from './emulator-control.js';
import type { AgentEmulator, AgentEmulatorOptions, RecordedCall } from './emulator-types.js';

export type { Endpoint, FailureSpec, FaultScope };
export type { AgentEmulator, AgentEmulatorOptions, ChatCall, RecordedCall } from './emulator-types.js';

const RATE_LIMITED = { error: 'rate limit exceeded' };

function unnamed(id: string): Instance {
  return { id, name: id, status: 'running', type: 'assistant' };
}

/** Starts the emulator; `baseUrl` of the result is the `{base_url}` to configure. */
export async function startAgentEmulator(options: AgentEmulatorOptions = {}): Promise<AgentEmulator> {
  const plan = new FaultPlan();
  const calls: RecordedCall[] = [];
  const waiters = new Set<() => void>();
  const hanging = new Set<() => void>();
  const timers = new Set<NodeJS.Timeout>();
  const maxCalls = options.maxCalls ?? 10_000;
  let messageCounter = 0;
  let open = 0;
  let peakOpen = 0;
  const state: AccountState = {
    apiKey: options.apiKey ?? DEMO_API_KEY,
    sessionCookie: options.sessionCookie ?? DEMO_SESSION_COOKIE,
    sessionToken: options.sessionToken ?? DEMO_SESSION_TOKEN,
    instances: options.instances ? [...options.instances] : DEMO_INSTANCES.map((i) => ({ ...i })),
    credentials: new Map(),
    reply: options.reply ?? ((id, message) => demoReply(state.instances.find((i) => i.id === id) ?? unnamed(id), message)),
    nextMessageId: () => `msg_${++messageCounter}`,
  };
  const others: AccountState[] = (options.otherAccounts ?? []).map((a) => ({
    apiKey: a.apiKey,
    ...(a.sessionToken ? { sessionToken: a.sessionToken } : {}),
    instances: [...a.instances],
    credentials: new Map(),
    reply: state.reply,
    nextMessageId: state.nextMessageId,
  }));
  /** The account a request authenticates as: another account's key or session, else the main one. */
  const accountOf = (req: IncomingMessage): AccountState => {
    const key = req.headers['x-api-key'];
    const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    return others.find((a) => a.apiKey === key || (bearer !== undefined && a.sessionToken === bearer)) ?? state;
  };
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => (timers.delete(timer), resolve()), ms);
      timers.add(timer);
    });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const [path = '/', ...query] = (req.url ?? '/').split('?');
    open += 1;
    peakOpen = Math.max(peakOpen, open);
    res.once('close', () => (open -= 1));
    let body: string;
    try {
      body = await readBody(req);
    } catch (err) {
      if (err instanceof BodyTooLarge) return sendJson(res, 413, { error: 'request body too large' }, { connection: 'close' });
      return void req.socket.destroy();
    }
    const json = parseJson(body);
    if (options.control === true && path.startsWith('/__control/')) {
      const answer = handleControl(emulator, req.method ?? 'GET', path.slice('/__control/'.length), json);
      return sendJson(res, answer.status, answer.body);
    }

    const route = routeOf(path);
    const chatId = isRecord(json) && typeof json.instanceId === 'string' ? json.instanceId : undefined;
    const instanceId = route?.endpoint === 'chat' ? chatId : route?.instanceId;
    const { method = 'GET', headers } = req;
    const at = Date.now();
    calls.push({ method, path, endpoint: route?.endpoint, instanceId, headers, body, json, at, remotePort: req.socket.remotePort });
    if (calls.length > maxCalls) calls.splice(0, calls.length - maxCalls);
    for (const check of [...waiters]) check();
    if (!route) return sendJson(res, 404, { error: 'not found' });

    const delay = plan.delayFor(route.endpoint, instanceId);
    if (delay > 0) await sleep(delay);
    const fault = plan.take(route.endpoint, instanceId);
    if (fault?.type === 'hang') {
      await new Promise<void>((resolve) => {
        hanging.add(resolve);
        res.once('close', () => hanging.delete(resolve));
      });
    }
    if (fault?.type === 'reset') return void req.socket.resetAndDestroy();
    if (fault?.type === 'fail') return sendFailure(res, fault.spec);
    if (fault?.type === 'malformed') return send(res, 200, fault.body, { 'content-type': fault.contentType });
    if (fault?.type === 'huge') return sendHuge(res, fault.bytes);

    if (req.method !== route.method) return sendJson(res, 405, { error: 'method not allowed' }, { allow: route.method });
    const refusal = shapeRefusal(req, route, query.length > 0 ? query.join('?') : undefined, body);
    if (refusal) return sendJson(res, refusal.status, { error: refusal.error });
    const account = accountOf(req);
    if (route.endpoint === 'chat') return handleChat(req, res, json, account);
    if (route.endpoint === 'instances') return handleInstances(req, res, account);
    return handleCredentials(req, res, route, json, account);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) sendJson(res, 500, { error: 'emulator failure' });
      else res.destroy();
    });
  });
  if (options.keepAliveTimeoutMs !== undefined) server.keepAliveTimeout = options.keepAliveTimeoutMs;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  // A wildcard bind is reached through loopback.
  const reachable = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address;
  const host = reachable.includes(':') ? `[${reachable}]` : reachable;
  const origin = `http://${host}:${address.port}`;
  let closing: Promise<void> | undefined;

  const emulator: AgentEmulator = {
    baseUrl: `${origin}/api/v1`,
    origin,
    port: address.port,
    apiKey: state.apiKey,
    sessionCookie: state.sessionCookie ?? '',
    sessionToken: state.sessionToken ?? '',
    instances: state.instances,
    calls,
    credentials: state.credentials,
    agentConfig: (overrides = {}) => ({
      baseUrl: `${origin}/api/v1`,
      apiKey: state.apiKey,
      sessionCookie: state.sessionCookie,
      timeoutMs: 120_000,
      otherTimeoutMs: 15_000,
      ...overrides,
    }),
    chatCalls: (id) =>
      calls
        .filter((c) => c.endpoint === 'chat' && (id === undefined || c.instanceId === id))
        .flatMap((c) => {
          const message = isRecord(c.json) ? c.json.message : undefined;
          if (c.instanceId === undefined || typeof message !== 'string') return [];
          return [{ instanceId: c.instanceId, message, headers: c.headers, at: c.at }];
        }),
    waitForCalls: (count, filter = () => true, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = calls.filter(filter);
          if (found.length < count) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          const got = calls.filter(filter).length;
          reject(new Error(`agent emulator: expected ${count} matching call(s) within ${timeoutMs} ms, got ${got}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    failNext: (count, spec, scope) => plan.add(count, { type: 'fail', spec }, scope),
    rateLimitNext: (count, retryAfterSeconds, scope) =>
      plan.add(count, { type: 'fail', spec: { status: 429, body: RATE_LIMITED, retryAfter: retryAfterSeconds } }, scope),
    hangNext: (count, scope) => plan.add(count, { type: 'hang' }, scope),
    malformedNext: (count, body = '{"unexpected":true}', scope) =>
      plan.add(count, { type: 'malformed', body, contentType: 'application/json; charset=utf-8' }, scope),
    resetNext: (count, scope) => plan.add(count, { type: 'reset' }, scope),
    hugeNext: (count, bytes, scope) => plan.add(count, { type: 'huge', bytes }, scope),
    openRequests: () => open,
    peakOpenRequests: () => peakOpen,
    setDelay: (ms, scope) => plan.setDelay(ms, scope),
    releaseHanging: () => {
      for (const release of [...hanging]) release();
      hanging.clear();
    },
    hangingCount: () => hanging.size,
    reset: () => {
      calls.length = 0;
      peakOpen = open;
      plan.clear();
      state.credentials.clear();
    },
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        hanging.clear();
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
  return emulator;
}
