import { createServer, type Server } from 'node:http';
import express, { type Express } from 'express';
import type { Redis } from 'ioredis';
import type { Metrics } from '../metrics.js';
import type { Logger } from '../logger.js';

export interface HttpServerOptions {
  host: string;
  port: number;
  metrics: Metrics;
  logger: Logger;
  /** Connections whose PING decides readiness. */
  redis: Redis;
  /** Whether the agent service answered recently (probing it when not). */
  agentReady: () => Promise<boolean>;
  /** True once shutdown began: /readyz then says 503 so load balancers stop sending work. */
  stopping?: () => boolean;
  /** Readiness of parts beyond Redis and the agent (e.g. Discord shards), by name. */
  components?: () => Record<string, { ok: boolean; detail: Record<string, unknown> }>;
  /** Called before /metrics is rendered, to refresh gauges such as queue depth. */
  beforeMetrics?: () => Promise<void>;
}

export interface HttpServer {
  app: Express;
  server: Server;
  /** Starts listening; resolves with the bound port. */
  listen(): Promise<number>;
  close(): Promise<void>;
}

/** One HTTP server for probes, metrics, Slack events, the dashboard and the playground. */
export function createHttpServer(options: HttpServerOptions): HttpServer {
  const app = express();
  app.disable('x-powered-by');
  const server = createServer(app);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  app.get('/readyz', async (_req, res) => {
    if (options.stopping?.()) {
      res.status(503).json({ status: 'stopping' });
      return;
    }
    const [redisOk, agentOk] = await Promise.all([
      options.redis
        .ping()
        .then((r) => r === 'PONG')
        .catch(() => false),
      options.agentReady().catch(() => false),
    ]);
    const components = options.components?.() ?? {};
    const componentsOk = Object.values(components).every((c) => c.ok);
    res.status(redisOk && agentOk && componentsOk ? 200 : 503).json({
      redis: redisOk ? 'ok' : 'down',
      agent: agentOk ? 'ok' : 'down',
      ...Object.fromEntries(Object.entries(components).map(([name, c]) => [name, { status: c.ok ? 'ok' : 'down', ...c.detail }])),
    });
  });

  app.get('/metrics', async (_req, res) => {
    try {
      await options.beforeMetrics?.();
    } catch (err) {
      options.logger.warn({ err }, 'could not refresh queue metrics');
    }
    res.type(options.metrics.registry.contentType).send(await options.metrics.registry.metrics());
  });

  let closed: Promise<void> | undefined;
  return {
    app,
    server,
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.port, options.host, () => {
          server.off('error', reject);
          const address = server.address();
          resolve(typeof address === 'object' && address ? address.port : options.port);
        });
      }),
    close: () => {
      closed ??= new Promise((resolve) => {
        if (!server.listening) return resolve();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
