import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freeLoopbackPort } from '../../src/free-port.js';
import { somethingListens } from '../../src/private-redis.js';
import { spawnApp, waitForHealth } from '../playground/spawn-app.js';

/**
 * Redis set up as operators set it up, through `npm start` configured by REDIS_URL alone: an
 * eviction policy other than noeviction, and an ACL user that lacks something the bridge uses.
 * One private redis-server (password, ACL users, allkeys-lru), never the shared one.
 */
const PASSWORD = 'operator-redis-pass-7Q';
const LIMITED_PASSWORD = 'limited-user-pass-9Z';
let server: ChildProcess;
let port: number;

beforeAll(async () => {
  port = await freeLoopbackPort();
  server = spawn(
    'redis-server',
    ['--bind', '127.0.0.1', '--port', String(port), '--requirepass', PASSWORD, '--save', '', '--appendonly', 'no', '--maxmemory', '512mb', '--maxmemory-policy', 'allkeys-lru'],
    { stdio: 'ignore' },
  );
  while (!(await somethingListens(`redis://127.0.0.1:${port}`))) await new Promise((r) => setTimeout(r, 50));
  const admin = new Redis({ port, host: '127.0.0.1', password: PASSWORD });
  // Every key and command but pub/sub (Redis 7 gives a new user no channels, and a user made
  // from a read-write template often lacks them): what a hand-written ACL line looks like.
  await admin.call('ACL', 'SETUSER', 'bridge', 'on', `>${LIMITED_PASSWORD}`, '~*', '+@all', '-@pubsub');
  admin.disconnect();
});
afterAll(() => {
  server?.kill('SIGKILL');
});

describe('Redis as an operator runs it', () => {
  it('maxmemory-policy allkeys-lru: starts, and its JSON log says what eviction does and to set noeviction', async () => {
    const http = await freeLoopbackPort();
    const app = spawnApp({ HTTP_PORT: String(http), REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:${port}/3`, QUEUE_PREFIX: `evict-${http}` });
    let stdout = '';
    app.child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    try {
      await waitForHealth(app, `http://127.0.0.1:${http}`);
      const line = stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { level: number; msg: string; maxmemoryPolicy?: string })
        .find((l) => /maxmemory-policy/.test(l.msg));
      expect(line, stdout).toBeDefined();
      expect(line!.level).toBe(40);
      expect(line!.maxmemoryPolicy).toBe('allkeys-lru');
      expect(line!.msg).toMatch(/^Redis evicts keys when it is full \(maxmemory-policy allkeys-lru\): set maxmemory-policy noeviction/);
      expect(line!.msg).toMatch(/answered \(and billed\) twice/);
      expect(app.output()).not.toContain(PASSWORD);
    } finally {
      await app.stop();
    }
  }, 90_000);

  it('an ACL user without pub/sub: start-up stops with one line naming REDIS_URL, never its password', async () => {
    const app = spawnApp({ HTTP_PORT: '0', REDIS_URL: `redis://bridge:${LIMITED_PASSWORD}@127.0.0.1:${port}` });
    expect(await app.exited).not.toBe(0);
    const out = app.output();
    expect(out).toMatch(new RegExp(`Redis at redis://127\\.0\\.0\\.1:${port}: the user in REDIS_URL lacks permissions \\(NOPERM`));
    expect(out).not.toMatch(/start-up failed/);
    expect(out).not.toContain(LIMITED_PASSWORD);
  }, 60_000);

  it('rediss:// against a Redis without TLS: the line says to use redis:// for it', async () => {
    const app = spawnApp({ HTTP_PORT: '0', REDIS_URL: `rediss://:${PASSWORD}@127.0.0.1:${port}` });
    expect(await app.exited).not.toBe(0);
    expect(app.output()).toMatch(/REDIS_URL.*a Redis without TLS never answers rediss:\/\/: use redis:\/\/ for it/);
    expect(app.output()).not.toContain(PASSWORD);
  }, 60_000);
});
