import express from 'express';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer, DEFAULT_HTTP_LIMITS, type HttpLimits, type HttpServer } from '../../src/http/server.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import { Metrics } from '../../src/metrics.js';
import { postHead, rawRequest, type RawClient } from '../support/raw-http.js';

/** The real shared server on 127.0.0.1:0 with one route that reads a body, like /slack/events. */
async function startServer(redis: Redis, limits: Partial<HttpLimits>) {
  const lines: string[] = [];
  const logger = createLogger({ level: 'debug', registry: new SecretRegistry(), destination: { write: (line: string) => lines.push(line) } });
  const http = createHttpServer({ host: '127.0.0.1', port: 0, metrics: new Metrics(), logger, redis, agentReady: async () => true, limits });
  http.app.post('/upload', express.raw({ type: '*/*', limit: '1mb' }), (req, res) => {
    res.json({ bytes: (req.body as Buffer).length });
  });
  const port = await http.listen();
  return { http, port, lines, base: `http://127.0.0.1:${port}` };
}

describe('the shared HTTP server is bounded', () => {
  let redis: Redis;
  const servers: HttpServer[] = [];
  const clients: RawClient[] = [];

  beforeAll(() => {
    redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 3, connectionName: 'ops-http-bounds-test' });
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.socket.destroy();
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  afterAll(async () => {
    await redis.quit();
  });

  it('has a request timeout of 15 s, a headers timeout and a keep-alive timeout by default', async () => {
    const { http, base } = await startServer(redis, {});
    servers.push(http);
    expect(DEFAULT_HTTP_LIMITS.requestTimeoutMs).toBe(15_000);
    expect(http.server.requestTimeout).toBe(15_000);
    expect(http.server.headersTimeout).toBe(DEFAULT_HTTP_LIMITS.headersTimeoutMs);
    expect(http.server.keepAliveTimeout).toBe(DEFAULT_HTTP_LIMITS.keepAliveTimeoutMs);
    expect(http.server.maxConnections).toBe(DEFAULT_HTTP_LIMITS.maxConnections);
    const res = await fetch(`${base}/healthz`);
    expect(res.headers.get('keep-alive')).toBe(`timeout=${DEFAULT_HTTP_LIMITS.keepAliveTimeoutMs / 1000}`);
  });

  it('/readyz says Redis is down within a second when Redis answers nothing', async () => {
    // A client whose Redis is gone and who keeps trying to reconnect: its PING never settles.
    const gone = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: null, retryStrategy: () => 200 });
    gone.on('error', () => {});
    void gone.connect().catch(() => {});
    const { http, base } = await startServer(gone, {});
    servers.push(http);
    try {
      const started = Date.now();
      const res = await fetch(`${base}/readyz`);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ redis: 'down' });
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      gone.disconnect();
    }
  });

  it('answers /healthz while 300 slow POSTs are open: bodies past the cap get 503 unread and their connection closed', async () => {
    const maxBodiesInFlight = 20;
    const { http, port, base, lines } = await startServer(redis, { maxBodiesInFlight });
    servers.push(http);

    // 300 clients announce a 100 kB body and send 10 bytes of it, then stall.
    const slow = await Promise.all(Array.from({ length: 300 }, () => rawRequest(port, `${postHead('/upload', 100_000)}{"a":"bcd`)));
    clients.push(...slow);
    // Every client past the cap is answered at once, without the server waiting for its body...
    const answered: RawClient[] = [];
    await new Promise<void>((resolve) => {
      for (const c of slow) {
        void c.status().then(() => {
          answered.push(c);
          if (answered.length === slow.length - maxBodiesInFlight) resolve();
        }, () => {});
      }
    });
    for (const c of answered) expect(c.received()).toMatch(/^HTTP\/1\.1 503 [^]*\r\nConnection: close\r\n/i);
    // ...and its connection is closed, so it holds no file handle.
    await Promise.all(answered.map((c) => c.closed));

    // The probes answer while the other 20 still hold their connections.
    const held = slow.filter((c) => !answered.includes(c));
    expect(held).toHaveLength(maxBodiesInFlight);
    expect(held.every((c) => c.received() === '' && !c.socket.destroyed)).toBe(true);
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    expect((await fetch(`${base}/metrics`)).status).toBe(200);

    // The cap frees as bodies end: once the held ones go, a normal upload goes through.
    for (const c of held) c.socket.destroy();
    await Promise.all(held.map((c) => c.closed));
    let ok: Response | undefined;
    while (ok?.status !== 200) ok = await fetch(`${base}/upload`, { method: 'POST', body: 'x'.repeat(1000) });
    expect(await ok.json()).toEqual({ bytes: 1000 });
    // One warning line for the flood, not one per refusal.
    expect(lines.filter((l) => l.includes('too many request bodies in flight'))).toHaveLength(1);
  });

  it('cuts a slow body off at the request timeout with 408 and closes the connection', async () => {
    const { http, port } = await startServer(redis, { requestTimeoutMs: 1_000, headersTimeoutMs: 800 });
    servers.push(http);
    const slow = await rawRequest(port, `${postHead('/upload', 100_000)}{"a":"bcd`);
    clients.push(slow);
    expect(await slow.status()).toBe(408);
    await slow.closed;
  });

  it('closes a connection that never finishes its headers', async () => {
    const { http, port } = await startServer(redis, { requestTimeoutMs: 1_500, headersTimeoutMs: 800 });
    servers.push(http);
    const idle = await rawRequest(port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    clients.push(idle);
    expect(await idle.status()).toBe(408);
    await idle.closed;
  });

  it('closes connections over maxConnections at once, and accepts again when they go', async () => {
    const { http, port, base } = await startServer(redis, { maxConnections: 5 });
    servers.push(http);
    const open: RawClient[] = [];
    for (let i = 0; i < 5; i++) open.push(await rawRequest(port, ''));
    clients.push(...open);
    const extra = await rawRequest(port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    clients.push(extra);
    await extra.closed;
    expect(extra.received()).toBe('');
    for (const c of open) c.socket.destroy();
    await Promise.all(open.map((c) => c.closed));
    // The server learns of the closes asynchronously; the next probe succeeds once it has.
    let status = 0;
    while (status !== 200) {
      status = await fetch(`${base}/healthz`, { headers: { connection: 'close' } }).then(
        (r) => r.status,
        () => 0,
      );
    }
    expect(status).toBe(200);
  });
});
