import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { freeLoopbackPort } from '../../src/free-port.js';
import { somethingListens } from '../../src/private-redis.js';
import { startPipeline, webMessage, type Pipeline } from '../support/pipeline.js';
import { sleep, until, watchProcessErrors } from './support/guards.js';

/**
 * The Redis password is changed on the server while the bridge runs (a rotation done in the
 * wrong order): every reconnect is refused with WRONGPASS. Before, the log said "Redis connection
 * lost … retrying" once and then BullMQ's raw `WRONGPASS …` as a "worker error" and a "queue
 * connection error" several times a second, never naming REDIS_URL. Now one error line a minute
 * names REDIS_URL (never the password), and the bridge heals once the password is back.
 */
const PASSWORD = 'first-password-4K';
const ROTATED = 'second-password-8M';
let server: ChildProcess | undefined;
let p: Pipeline | undefined;
const guard = watchProcessErrors();

afterEach(async () => {
  await p?.close();
  p = undefined;
  server?.kill('SIGKILL');
  server = undefined;
});

describe('Redis password changed on the server while the bridge runs', () => {
  it('one line naming REDIS_URL, no flood of raw WRONGPASS errors, no password in the log, and healed when it is back', async () => {
    const port = await freeLoopbackPort();
    server = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--requirepass', PASSWORD, '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    while (!(await somethingListens(`redis://127.0.0.1:${port}`))) await sleep(50);
    const url = `redis://:${PASSWORD}@127.0.0.1:${port}`;
    p = await startPipeline({ REDIS_URL: url, LOG_LEVEL: 'info' });
    const pl = p;
    const admin = new Redis(url);
    try {
      const first = webMessage('before the change', { channelId: 'pw', isDirect: true });
      await pl.bridge.ingress.handle(first);
      await until(() => pl.sink.posts.some((x) => x.kind === 'chunk' && x.messageId === first.messageId) || undefined, 'answered before');

      await admin.config('SET', 'requirepass', ROTATED);
      await admin.call('CLIENT', 'KILL', 'TYPE', 'normal');
      await sleep(6_000);
      const told = pl.logs.matching(/refuses the password in REDIS_URL/);
      expect(told).toHaveLength(1);
      expect(told[0]!.level).toBe(50);
      expect(told[0]!.msg).toMatch(new RegExp(`^Redis at redis://127\\.0\\.0\\.1:${port} refuses the password in REDIS_URL \\(authentication failed`));
      // Each retry's refusal is not an error line of its own.
      expect(pl.logs.lines.filter((l) => /WRONGPASS/.test(l) && /"level":(40|50)/.test(l)).length).toBeLessThanOrEqual(2);

      const fresh = new Redis({ port, host: '127.0.0.1', password: ROTATED });
      await fresh.config('SET', 'requirepass', PASSWORD);
      fresh.disconnect();
      await until(() => pl.logs.matching(/Redis connection is back/).length > 0 || undefined, 'reconnected', 30_000);
      const second = webMessage('after the change', { channelId: 'pw', isDirect: true });
      await pl.bridge.ingress.handle(second);
      await until(() => pl.sink.posts.some((x) => x.kind === 'chunk' && x.messageId === second.messageId) || undefined, 'answered after', 30_000);
      expect(pl.logs.text).not.toContain(PASSWORD);
      expect(pl.logs.text).not.toContain(ROTATED);
      expect(guard.errors).toEqual([]);
    } finally {
      admin.disconnect();
    }
  }, 90_000);
});
