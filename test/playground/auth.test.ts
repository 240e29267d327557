import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createPlaygroundAuth, isLoopbackAddress, SESSION_COOKIE, validSession } from '../../adapters/web/auth.js';
import { SecretRegistry } from '../../src/logger.js';

/** A real Express app with the playground's auth in front of one route, on `host`. */
async function serve(options: { token?: string; sessionTtlMs?: number; now?: () => number }, host = '127.0.0.1') {
  const auth = createPlaygroundAuth({ ...options, secrets: new SecretRegistry() });
  const app = express();
  app.get('/playground/login', auth.login);
  app.get('/playground/api/info', auth.check, (_req, res) => void res.json({ ok: true }));
  const server = await new Promise<ReturnType<typeof app.listen>>((resolve) => {
    const s = app.listen(0, host, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return { server, base: `http://${host}:${port}` };
}

const servers: Array<{ close(): void; closeAllConnections(): void }> = [];
afterEach(() => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

describe('playground auth', () => {
  it('knows loopback socket addresses', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) expect(isLoopbackAddress(a), a).toBe(true);
    for (const a of ['10.0.0.5', '::ffff:10.0.0.5', '192.168.1.1', 'fe80::1', '::', '0.0.0.0', undefined]) expect(isLoopbackAddress(a), String(a)).toBe(false);
  });

  it('without a token refuses a peer that is not on loopback, even with a loopback Host header', async () => {
    // Any non-loopback IPv4 address of this machine: connecting to it makes the peer address non-loopback.
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
    expect(external, 'this test needs a non-loopback IPv4 interface').toBeDefined();
    const { server, base } = await serve({}, external);
    servers.push(server);
    const res = await fetch(`${base}/playground/api/info`, { headers: { Host: 'localhost' } });
    expect(res.status).toBe(403);
  });

  it('issues a session cookie that expires: after its lifetime the server refuses it', async () => {
    let clock = Date.UTC(2026, 0, 1);
    const token = 'playground-token-1';
    const { server, base } = await serve({ token, sessionTtlMs: 60 * 60_000, now: () => clock });
    servers.push(server);
    const login = await fetch(`${base}/playground/login?token=${token}`, { redirect: 'manual' });
    expect(login.status).toBe(303);
    const setCookie = login.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/; Max-Age=3600;/);
    const cookie = setCookie.split(';')[0]!;
    const info = () => fetch(`${base}/playground/api/info`, { headers: { Cookie: cookie } }).then((r) => r.status);

    expect(await info()).toBe(200);
    clock += 60 * 60_000 - 1_000;
    expect(await info()).toBe(200);
    clock += 2_000;
    expect(await info()).toBe(401);

    // The expiry is under the MAC: moving it forward makes the cookie invalid.
    const value = cookie.slice(SESSION_COOKIE.length + 1);
    const [, mac] = value.split('.');
    const forged = `${Math.floor(clock / 1000) + 3600}.${mac}`;
    expect(validSession(forged, token, clock)).toBe(false);
    expect(validSession(value, 'another-token', Date.UTC(2026, 0, 1))).toBe(false);
  });

  it('holds off a client guessing the token: past 10 wrong tokens a minute, login and Bearer get 429 (the right token too); a session cookie still works', async () => {
    let clock = Date.UTC(2026, 0, 1);
    const token = 'playground-token-guess-me';
    const { server, base } = await serve({ token, now: () => clock });
    servers.push(server);
    const login = (t: string) => fetch(`${base}/playground/login?token=${encodeURIComponent(t)}`, { redirect: 'manual' });
    const cookie = (await login(token)).headers.get('set-cookie')!.split(';')[0]!;

    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await login(`guess-${i}`)).status);
    for (let i = 0; i < 20; i++) {
      statuses.push((await fetch(`${base}/playground/api/info`, { headers: { Authorization: `Bearer guess-${i}` } })).status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(new Set(statuses.slice(10))).toEqual(new Set([429]));
    const held = await login(token);
    expect(held.status).toBe(429);
    expect(Number(held.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await fetch(`${base}/playground/api/info`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(429);
    // A page already open keeps working.
    expect((await fetch(`${base}/playground/api/info`, { headers: { Cookie: cookie } })).status).toBe(200);

    clock += 61_000;
    expect((await login(token)).status).toBe(303);
  });
});
