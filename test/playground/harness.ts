import { createServer, type Server } from 'node:http';
import { loadTestConfig } from '../support/config.js';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import express from 'express';
import { Redis } from 'ioredis';
import type { Binding, BindingStore } from '../../src/bindings/types.js';
import type { CommandCaller, CommandReply, Commands } from '../../src/commands/types.js';
import { type Config } from '../../src/config/load.js';
import type { Adapter } from '../../src/core/adapter.js';
import type { IncomingMessage } from '../../src/core/message.js';
import type { FailureEntry, QueueInfo } from '../../src/core/platform-context.js';
import type { ReplyPort } from '../../src/core/reply-port.js';
import type { Ingress, IngressResult } from '../../src/ingress/types.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import { webPlatform } from '../../adapters/web/index.js';
import { createFeedbackStore } from '../../src/feedback/index.js';
import { createSeenLedger } from '../../src/ingress/seen-ledger.js';
import { Metrics } from '../../src/metrics.js';

export const REDIS_URL = 'redis://127.0.0.1:6379';

/** Calls the fake Commands received, and the secret registry's view while credential ran. */
export interface CommandCall {
  name: string;
  caller: CommandCaller;
  args: unknown[];
}

export interface Harness {
  baseUrl: string;
  config: Readonly<Config>;
  prefix: string;
  secrets: SecretRegistry;
  /** What ingress.handle received. */
  handled: IncomingMessage[];
  /** What the fake ingress answers; by default `queued`. */
  ingressResult: (m: IncomingMessage) => IngressResult;
  commandCalls: CommandCall[];
  /** Set by the fake `credential`: whether the registry hid the value while the call ran. */
  valueRedactedDuringCall?: boolean;
  bindings: Map<string, Binding>;
  failures: FailureEntry[];
  /** The process's metrics as the adapter sees them (a worker in the same process counts here). */
  metrics: Metrics;
  /** A reply port built as a worker process would: its own Redis connection, no adapter parts. */
  workerPort: ReplyPort;
  adapter: Adapter;
  close(): Promise<void>;
}

function reply(title: string, lines: string[] = []): CommandReply {
  return { ok: true, title, lines };
}

/** The web adapter on its own express server, with fake ingress/commands and a real Redis. */
export async function startHarness(env: Record<string, string> = {}): Promise<Harness> {
  const prefix = `pgtest-${randomUUID()}`;
  const config = loadTestConfig({ QUEUE_PREFIX: prefix, REDIS_URL, LOG_LEVEL: 'silent', ...env });
  const logger = createLogger({ level: 'silent' });
  const secrets = new SecretRegistry();
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  const workerRedis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });

  const h = {} as Harness;
  h.prefix = prefix;
  h.config = config;
  h.secrets = secrets;
  h.handled = [];
  h.commandCalls = [];
  h.bindings = new Map();
  h.failures = [];
  h.metrics = new Metrics();
  h.ingressResult = (m) => ({ status: 'queued', jobId: `web-${m.messageId}` });

  const ingress: Ingress = {
    async handle(message) {
      h.handled.push(message);
      return h.ingressResult(message);
    },
  };
  const call = (name: string) => async (caller: CommandCaller, ...args: unknown[]) => {
    h.commandCalls.push({ name, caller, args });
    return reply(`${name} done`, [`ran \`${name}\``]);
  };
  const commands: Commands = {
    help: () => reply('help', ['`bind`', '`why`']),
    instances: call('instances'),
    bind: async (caller, instanceId, mode) => {
      h.commandCalls.push({ name: 'bind', caller, args: [instanceId, mode] });
      h.bindings.set(caller.channelId, { instanceId, mode: mode ?? 'mention', errorPolicy: 'reply', context: 'off', source: 'admin' });
      return reply('Channel bound', [`bound to \`${instanceId}\``]);
    },
    unbind: call('unbind'),
    status: call('status'),
    credential: async (caller, instanceId, key, value) => {
      h.commandCalls.push({ name: 'credential', caller, args: [instanceId, key, '<value>'] });
      h.valueRedactedDuringCall = secrets.redact(`x ${value} x`) === 'x [REDACTED] x';
      return reply('Credential added', [`\`${key}\` was added to \`${instanceId}\`.`]);
    },
    set: call('set'),
    why: call('why'),
    audit: call('audit'),
    feedback: call('feedback'),
    setup: call('setup'),
    refuse: call('refuse'),
    cachedInstances: async () => [
      { id: 'inst_a', name: 'Alpha', status: 'running', type: 'assistant' },
      { id: 'inst_b', name: 'Beta', status: 'stopped', type: 'assistant' },
    ],
  };
  const bindings: BindingStore = {
    get: async (_p, c) => h.bindings.get(c),
    set: async (_p, c, b) => void h.bindings.set(c, b),
    update: async (_p, c, change) => {
      const previous = h.bindings.get(c);
      const binding = change(previous);
      if (binding) h.bindings.set(c, binding);
      return { previous, binding };
    },
    remove: async (_p, c) => {
      const previous = h.bindings.get(c);
      h.bindings.delete(c);
      return previous;
    },
    list: async () => [...h.bindings].map(([channelId, binding]) => ({ platform: 'web' as const, channelId, binding })),
  };
  const queueInfo: QueueInfo = {
    counts: async () => ({ waiting: 1, active: 2, completed: 3, failed: h.failures.length, delayed: 0 }),
    recentFailures: async (n) => h.failures.slice(0, n),
  };

  const app = express();
  const port = webPlatform.createReplyPort({ config, logger, redis });
  h.workerPort = webPlatform.createReplyPort({ config, logger, redis: workerRedis });
  h.adapter = webPlatform.createAdapter({
    config,
    logger,
    secrets,
    ingress,
    seen: createSeenLedger({ redis, prefix: `${prefix}:chat`, logger }),
    commands,
    http: app,
    redis,
    replyPort: port,
    bindings,
    queueInfo,
    feedback: createFeedbackStore({ redis, prefix: `${prefix}:chat` }),
    metrics: h.metrics,
  });
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  await h.adapter.start();
  h.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  h.close = async () => {
    await h.adapter.stop();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    await Promise.all([redis.quit(), workerRedis.quit()]);
  };
  return h;
}

/** POSTs JSON to the playground API. */
export async function post(h: Harness, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${h.baseUrl}/playground/api/${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json().catch(() => ({}))) as Record<string, any>, headers: res.headers };
}
