import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { somethingListens } from '../../src/private-redis.js';
import { freeLoopbackPort } from '../../src/free-port.js';
import { startAgentEmulator } from '../../src/demo/agent-emulator.js';
import { spawnApp, waitForHealth, type RunningApp } from './spawn-app.js';

/** Resolves once the app's output matches, or rejects with the output when it exits first. */
async function outputMatches(app: RunningApp, pattern: RegExp, timeoutMs = 45_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let gone = false;
  void app.exited.then(() => (gone = true));
  while (Date.now() < deadline) {
    const match = pattern.exec(app.output());
    if (match) return match[0];
    if (gone) throw new Error(`exited without printing ${pattern}:\n${app.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no ${pattern} within ${timeoutMs} ms:\n${app.output()}`);
}

describe('`npm start` with no REDIS_URL and nothing answering at the default address', () => {
  // The shared Redis on 6379 must keep running for other tests, so the default address is
  // moved (test hook AGENT_BRIDGE_DEFAULT_REDIS_URL) to a loopback port where nothing listens.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`starts a private redis-server, says so in the banner, and stops it on ${signal}`, async () => {
      const nothing = await freeLoopbackPort();
      const port = await freeLoopbackPort();
      const app = spawnApp({ HTTP_PORT: String(port), AGENT_BRIDGE_DEFAULT_REDIS_URL: `redis://127.0.0.1:${nothing}` });
      let stdout = '';
      app.child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
      try {
        await waitForHealth(app, `http://127.0.0.1:${port}`);
        const url = (await outputMatches(app, /private\s+redis-server at redis:\/\/127\.0\.0\.1:\d+/)).replace(/^.*at /s, '');
        expect(app.output()).toMatch(/data in \S*\.data\/redis/);
        expect(app.output()).toContain('DEMO');
        const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
        expect(ready.status, await ready.text()).toBe(200);
        expect(await somethingListens(url)).toBe(true);

        app.child.kill(signal);
        expect(await app.exited).toBe(0);
        // Off a terminal, stdout is JSON lines only: the banner went to stderr.
        const lines = stdout.trim().split('\n');
        expect(lines.length).toBeGreaterThan(2);
        for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
        expect(stdout).not.toContain('DEMO');
        expect(await somethingListens(url)).toBe(false);
      } finally {
        await app.stop();
      }
    }, 90_000);
  }

  it('without redis-server on PATH, prints one line saying how to get Redis, and stops', async () => {
    const bin = mkdtempSync(join(tmpdir(), 'agent-bridge-path-'));
    try {
      symlinkSync(process.execPath, join(bin, 'node'));
      const app = spawnApp({ PATH: bin, HTTP_PORT: '0', AGENT_BRIDGE_DEFAULT_REDIS_URL: `redis://127.0.0.1:${await freeLoopbackPort()}` });
      expect(await app.exited).not.toBe(0);
      const lines = app.output().trim().split('\n');
      expect(lines, app.output()).toHaveLength(1);
      expect(lines[0]).toContain('docker run -d -p 127.0.0.1:6379:6379 redis:7-alpine');
      expect(lines[0]).toMatch(/apt-get install redis-server/);
      expect(lines[0]).toMatch(/brew install redis/);
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  }, 60_000);

  it('with REDIS_URL set, never starts one: it says the configured Redis is not reachable', async () => {
    const nothing = await freeLoopbackPort();
    const app = spawnApp({ HTTP_PORT: '0', REDIS_URL: `redis://127.0.0.1:${nothing}` });
    expect(await app.exited).not.toBe(0);
    expect(app.output()).toContain(`Redis is not reachable at redis://127.0.0.1:${nothing}`);
    expect(app.output()).not.toMatch(/private/);
  }, 60_000);
});

describe('start-up errors say what is wrong', () => {
  let passwordRedis: ReturnType<typeof spawn>;
  let passwordPort: number;

  beforeAll(async () => {
    passwordPort = await freeLoopbackPort();
    passwordRedis = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(passwordPort), '--requirepass', 'right-password', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    while (!(await somethingListens(`redis://127.0.0.1:${passwordPort}`))) await new Promise((r) => setTimeout(r, 50));
  });
  afterAll(() => {
    passwordRedis?.kill('SIGKILL');
  });

  it('a wrong Redis password is "authentication failed", and the password is not shown', async () => {
    const app = spawnApp({ HTTP_PORT: '0', REDIS_URL: `redis://:wrong-password@127.0.0.1:${passwordPort}` });
    expect(await app.exited).not.toBe(0);
    expect(app.output()).toMatch(/authentication failed/);
    expect(app.output()).not.toMatch(/not reachable/);
    expect(app.output()).not.toContain('wrong-password');
  }, 60_000);

  it('a missing Redis password is "authentication failed" too', async () => {
    const app = spawnApp({ HTTP_PORT: '0', REDIS_URL: `redis://127.0.0.1:${passwordPort}` });
    expect(await app.exited).not.toBe(0);
    expect(app.output()).toMatch(/authentication failed \(this Redis requires a password\)/);
  }, 60_000);

  it('a database index out of range stops start-up', async () => {
    const app = spawnApp({ HTTP_PORT: '0', REDIS_URL: 'redis://127.0.0.1:6379/999' });
    expect(await app.exited).not.toBe(0);
    expect(app.output()).toMatch(/database 999 does not exist on this server/);
  }, 60_000);

  it('an HTTP port in use says to set HTTP_PORT', async () => {
    const taken: Server = createServer();
    const port = await new Promise<number>((done) => taken.listen(0, '127.0.0.1', () => done((taken.address() as { port: number }).port)));
    try {
      const app = spawnApp({ HTTP_PORT: String(port) });
      expect(await app.exited).not.toBe(0);
      expect(app.output()).toMatch(new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use by another program: set HTTP_PORT`));
      expect(app.output()).not.toMatch(/EADDRINUSE/);
    } finally {
      taken.close();
    }
  }, 60_000);

  it('a base URL without its /api/v1 (the service answers 404) stops start-up with one line naming AGENT_API_BASE_URL', async () => {
    const agent = await startAgentEmulator({ apiKey: 'key-for-a-wrong-path' });
    const origin = new URL(agent.baseUrl).origin;
    // Before: one warning, then /readyz said ready and every user read "this channel's instance wasn't found".
    const app = spawnApp({ HTTP_PORT: '0', AGENT_API_BASE_URL: origin, AGENT_API_KEY: 'key-for-a-wrong-path', PLAYGROUND: 'true' });
    try {
      expect(await app.exited).toBe(1);
      expect(app.output()).toContain(`start-up failed: the agent service answered 404 for the instance listing at ${origin}/instances: check AGENT_API_BASE_URL, which includes the path prefix`);
      expect(app.output()).not.toContain('key-for-a-wrong-path');
    } finally {
      await agent.close();
    }
  }, 90_000);

  it('an agent service answering 500 at start-up logs one warning naming the status, and start-up goes on', async () => {
    const port = await freeLoopbackPort();
    const agent = await startAgentEmulator({ apiKey: 'key-of-a-broken-service' });
    agent.failNext(5, { status: 500, body: { error: 'internal' } }, { endpoint: 'instances' });
    const app = spawnApp({ HTTP_PORT: String(port), AGENT_API_BASE_URL: agent.baseUrl, AGENT_API_KEY: 'key-of-a-broken-service', PLAYGROUND: 'true' });
    try {
      await waitForHealth(app, `http://127.0.0.1:${port}`);
      await outputMatches(app, /answered 500 to the instance listing at start-up/);
      const warnings = app.output().split('\n').filter((l) => l.includes('answered 500 to the instance listing'));
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, status: 500 });
    } finally {
      expect(await app.stop()).toBe(0);
      await agent.close();
    }
  }, 90_000);

  it('a wrong AGENT_API_KEY stops start-up with one line naming it, never its value', async () => {
    const agent = await startAgentEmulator({ apiKey: 'the-right-key' });
    const app = spawnApp({ HTTP_PORT: '0', AGENT_API_BASE_URL: agent.baseUrl, AGENT_API_KEY: 'a-mistyped-key-4321', PLAYGROUND: 'true' });
    try {
      expect(await app.exited).toBe(1);
      expect(app.output()).toMatch(/start-up failed: the agent service did not accept AGENT_API_KEY \(HTTP 401/);
      expect(app.output()).not.toContain('a-mistyped-key-4321');
    } finally {
      await agent.close();
    }
  }, 90_000);

  it('an unreachable agent service logs one warning and start-up goes on', async () => {
    const port = await freeLoopbackPort();
    const nothing = await freeLoopbackPort();
    const app = spawnApp({
      HTTP_PORT: String(port),
      AGENT_API_BASE_URL: `http://127.0.0.1:${nothing}/api/v1`,
      AGENT_API_KEY: 'key-for-an-absent-service',
      PLAYGROUND: 'true',
    });
    try {
      await waitForHealth(app, `http://127.0.0.1:${port}`);
      await outputMatches(app, /the agent service is not reachable/);
      const warnings = app.output().split('\n').filter((l) => l.includes('the agent service is not reachable'));
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, baseUrl: `http://127.0.0.1:${nothing}/api/v1` });
      expect(app.output()).not.toContain('key-for-an-absent-service');
    } finally {
      expect(await app.stop()).toBe(0);
    }
  }, 90_000);
});
