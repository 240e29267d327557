import { createServer, type Server } from 'node:http';
import { errorFields } from '../logger.js';
import express, { type Express } from 'express';
import { limitBodiesInFlight } from './bodies-in-flight.js';
import { withTimeout } from '../core/with-timeout.js';

/** How long /readyz waits for Redis's PONG before it reports Redis down. */
const READY_REDIS_TIMEOUT_MS = 800;
/**
 * How long /metrics waits for its gauges' refresh (queue depth, from Redis) before it answers with
 * the last values: while Redis is away a refresh waits out the client's retries (6 s and more),
 * and a scrape that times out shows nothing at all, just when the figures matter.
 */
export const METRICS_REFRESH_TIMEOUT_MS = 2_000;
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
  /** Bounds on what clients may hold; each has a default fit for a bridge behind Slack. */
  limits?: Partial<HttpLimits>;
}

/**
 * What one client may hold of the server. Slow or idle clients are cut off by the timeouts;
 * slow request bodies cannot pile up past {@link HttpLimits.maxBodiesInFlight}, so probes
 * (GET, no body) still answer while a flood of slow POSTs is under way.
 */
export interface HttpLimits {
  /** Time to receive a whole request, headers and body (Node answers 408). @defaultValue 15000 */
  requestTimeoutMs: number;
  /** Time to receive the request headers. @defaultValue 10000 */
  headersTimeoutMs: number;
  /** How long an idle keep-alive connection stays open. @defaultValue 5000 */
  keepAliveTimeoutMs: number;
  /** Open connections; more are closed at once (a file handle each). @defaultValue 2000 */
  maxConnections: number;
  /** Requests whose body is still being received; more are answered 503 without reading. @defaultValue 500 */
  maxBodiesInFlight: number;
}

export const DEFAULT_HTTP_LIMITS: Readonly<HttpLimits> = Object.freeze({
  requestTimeoutMs: 15_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 2_000,
  maxBodiesInFlight: 500,
});

export interface HttpServer {
  app: Express;
  server: Server;
  /** Starts listening; resolves with the bound port. */
  listen(): Promise<number>;
  close(): Promise<void>;
}

/** One HTTP server for probes, metrics, Slack events, the dashboard and the playground. */
export function createHttpServer(options: HttpServerOptions): HttpServer {
  const limits = { ...DEFAULT_HTTP_LIMITS, ...options.limits };
  const app = express();
  app.disable('x-powered-by');
  const server = createServer(
    {
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node checks the two timeouts above on this interval (30 s by default, which would let a
      // slow client keep its connection twice as long as the timeout says).
      connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(limits.requestTimeoutMs / 4))),
    },
    app,
  );
  server.maxConnections = limits.maxConnections;
  // First of all handlers, so no route (Slack's included) reads a body past the cap.
  app.use(limitBodiesInFlight(limits.maxBodiesInFlight, options.logger));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  app.get('/readyz', async (_req, res) => {
    if (options.stopping?.()) {
      res.status(503).json({ status: 'stopping' });
      return;
    }
    const [redisOk, agentOk] = await Promise.all([
      // A Redis that is gone answers nothing: a probe says "down" within a second, not after
      // the client's reconnect attempts (probes time out at 1 s by default on Kubernetes).
      withTimeout(
        options.redis
          .ping()
          .then((r) => r === 'PONG')
          .catch(() => false),
        READY_REDIS_TIMEOUT_MS,
        () => false,
      ),
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

  // One refresh at a time, shared by the scrapes that come while it runs.
  let refreshing: Promise<void> | undefined;
  const refresh = () =>
    (refreshing ??= (async () => {
      try {
        await options.beforeMetrics?.();
      } catch (err) {
        options.logger.warn({ ...errorFields(err) }, 'could not refresh queue metrics');
      } finally {
        refreshing = undefined;
      }
    })());

  app.get('/metrics', async (_req, res) => {
    await withTimeout(refresh(), METRICS_REFRESH_TIMEOUT_MS, () => undefined);
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
