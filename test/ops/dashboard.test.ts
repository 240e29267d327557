import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountDashboard } from '../../src/http/dashboard.js';
import { createHttpServer, type HttpServer } from '../../src/http/server.js';
import type { LoginThrottleOptions } from '../../src/http/login-throttle.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import { Metrics } from '../../src/metrics.js';

const USER = 'ops';
const PASSWORD = 'correct horse: battery staple';

/** The real HTTP server on 127.0.0.1:0 with the dashboard mounted (or not) over a real queue. */
async function startServer(redis: Redis, queue: Queue, credentials: { user?: string; password?: string; throttle?: LoginThrottleOptions }) {
  const lines: string[] = [];
  const logger = createLogger({ level: 'debug', registry: new SecretRegistry(), destination: { write: (line: string) => lines.push(line) } });
  const http = createHttpServer({
    host: '127.0.0.1',
    port: 0,
    metrics: new Metrics(),
    logger,
    redis,
    agentReady: async () => true,
  });
  const on = await mountDashboard(http.app, { queues: [queue], logger, ...credentials });
  const port = await http.listen();
  return { http, on, lines, base: `http://127.0.0.1:${port}` };
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('queue dashboard at /admin/queues', () => {
  let redis: Redis;
  let queue: Queue;
  const servers: HttpServer[] = [];

  beforeAll(async () => {
    redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 3, connectionName: 'ops-dashboard-test' });
    queue = new Queue(`ops-dashboard-${randomUUID()}`, { connection: redis, prefix: `ops-test-${randomUUID()}` });
    await queue.add('message', { text: 'hello' });
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await queue.obliterate({ force: true });
    await queue.close();
    await redis.quit();
  });

  it('is off (404) unless both ADMIN_USER and ADMIN_PASSWORD are set', async () => {
    for (const credentials of [{}, { user: USER }, { password: PASSWORD }, { user: '', password: '' }]) {
      const { http, on, base } = await startServer(redis, queue, credentials);
      servers.push(http);
      expect(on).toBe(false);
      const res = await fetch(`${base}/admin/queues`, { headers: { authorization: basic(USER, PASSWORD) } });
      expect(res.status).toBe(404);
      expect((await fetch(`${base}/admin/queues/api/queues`)).status).toBe(404);
      // The rest of the server is unaffected.
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
    }
  });

  describe('when on', () => {
    let base: string;
    let lines: string[];
    beforeAll(async () => {
      const started = await startServer(redis, queue, { user: USER, password: PASSWORD });
      servers.push(started.http);
      expect(started.on).toBe(true);
      ({ base, lines } = started);
    });

    it('answers 401 with a Basic challenge when no credentials are sent', async () => {
      for (const path of ['/admin/queues', '/admin/queues/api/queues']) {
        const res = await fetch(`${base}${path}`);
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm="[^"]+"/);
      }
    });

    it('answers 401 to a wrong user, a wrong password, and malformed headers', async () => {
      const headers = [
        basic(USER, 'wrong'),
        basic('someone', PASSWORD),
        basic(USER, PASSWORD.slice(0, -1)),
        basic(USER, `${PASSWORD}x`),
        basic('', ''),
        `Bearer ${PASSWORD}`,
        'Basic',
        'Basic !!!not-base64!!!',
        `Basic ${Buffer.from(`${USER}${PASSWORD}`).toString('base64')}`,
      ];
      for (const authorization of headers) {
        const res = await fetch(`${base}/admin/queues/api/queues`, { headers: { authorization } });
        expect(res.status, authorization).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Basic /);
      }
    });

    it('serves the board and the queue to the right credentials (a password may hold a colon)', async () => {
      const authorization = basic(USER, PASSWORD);
      const page = await fetch(`${base}/admin/queues`, { headers: { authorization } });
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/text\/html/);

      const api = await fetch(`${base}/admin/queues/api/queues`, { headers: { authorization } });
      expect(api.status).toBe(200);
      const body = (await api.json()) as { queues: Array<{ name: string; counts: Record<string, number> }> };
      const shown = body.queues.find((q) => q.name === queue.name);
      expect(shown?.counts.waiting).toBe(1);
    });

    it('refuses a change (PUT/POST) from a foreign Origin even with the right credentials; reads and same-origin changes work', async () => {
      const authorization = basic(USER, PASSWORD);
      const pause = (headers: Record<string, string>) => fetch(`${base}/admin/queues/api/queues/pause`, { method: 'PUT', headers: { authorization, ...headers } });
      for (const headers of [
        { origin: 'http://evil.example' },
        { origin: 'null' },
        { origin: base.replace('127.0.0.1', 'localhost') },
        { 'sec-fetch-site': 'cross-site' },
      ] as Array<Record<string, string>>) {
        const res = await pause(headers);
        expect(res.status, JSON.stringify(headers)).toBe(403);
        expect(await queue.isPaused()).toBe(false);
      }
      expect(lines.join('')).toContain('refused a change from another origin');
      // A foreign page may still read nothing without the credentials, and GETs are not blocked.
      expect((await fetch(`${base}/admin/queues/api/queues`, { headers: { authorization, origin: 'http://evil.example' } })).status).toBe(200);

      // The board's own page (same origin) and tools that send no Origin can change things.
      expect((await pause({ origin: base, 'sec-fetch-site': 'same-origin' })).status).toBe(200);
      expect(await queue.isPaused()).toBe(true);
      const resume = await fetch(`${base}/admin/queues/api/queues/resume`, { method: 'PUT', headers: { authorization } });
      expect(resume.status).toBe(200);
      expect(await queue.isPaused()).toBe(false);
    });

    it('cannot be framed by another page (clickjacking its buttons) and does not name its server', async () => {
      const authorization = basic(USER, PASSWORD);
      for (const [path, headers] of [
        ['/admin/queues', { authorization }],
        ['/admin/queues/api/queues', { authorization }],
        ['/admin/queues', {}],
      ] as const) {
        const res = await fetch(`${base}${path}`, { headers });
        expect(res.headers.get('x-frame-options'), path).toBe('DENY');
        expect(res.headers.get('content-security-policy'), path).toContain("frame-ancestors 'none'");
        expect(res.headers.get('x-powered-by'), path).toBeNull();
      }
    });

    it('never logs the credentials that were sent', async () => {
      await fetch(`${base}/admin/queues`, { headers: { authorization: basic(USER, 'a-near-miss-password') } });
      const log = lines.join('');
      expect(log).toContain('wrong user or password');
      expect(log).not.toContain('a-near-miss-password');
      expect(log).not.toContain(PASSWORD);
      expect(log).not.toContain(Buffer.from(`${USER}:a-near-miss-password`).toString('base64'));
    });
  });

  it('holds off a client guessing the password: past 10 wrong attempts a minute it gets 429 (even with the right one), other clients do not, and the log gets two lines, not one per guess', async () => {
    let now = 1_000_000;
    const started = await startServer(redis, queue, { user: USER, password: PASSWORD, throttle: { now: () => now } });
    servers.push(started.http);
    const get = (authorization: string, localAddress = '127.0.0.1') =>
      new Promise<{ status: number; retryAfter?: string }>((resolve, reject) => {
        const url = new URL(`${started.base}/admin/queues/api/queues`);
        const req = request({ host: url.hostname, port: url.port, path: url.pathname, localAddress, headers: { authorization } }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined }));
        });
        req.on('error', reject);
        req.end();
      });

    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await get(basic(USER, `guess-${i}`))).status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(new Set(statuses.slice(10))).toEqual(new Set([429]));
    const refused = await get(basic(USER, PASSWORD));
    expect(refused.status).toBe(429);
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    // Another address is not held off by this one's guesses.
    expect((await get(basic(USER, PASSWORD), '127.0.0.2')).status).toBe(200);
    const log = started.lines.join('');
    expect(log.match(/wrong user or password/g)).toHaveLength(1);
    expect(log.match(/too many wrong passwords/g)).toHaveLength(1);

    // The minute over, the right password works again.
    now += 61_000;
    expect((await get(basic(USER, PASSWORD))).status).toBe(200);
  });
});
