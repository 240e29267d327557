import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanup, REDIS_URL, testRedis } from '../support/redis-helpers.js';

/**
 * `npm start` as an operator runs it and a supervisor stops it: stdout is JSON lines only
 * (npm's own "> agent-bridge start" lines would break a log shipper), and a SIGTERM to the
 * process group (which reaches the bridge twice: directly and relayed by npm) or to npm alone
 * shuts down gracefully, exit code 0, nothing left running.
 */
const { redis, prefix } = testRedis();
afterAll(() => cleanup(redis, prefix));

let child: ChildProcess | undefined;
afterEach(() => {
  // Whatever is left of the group.
  if (child?.pid && child.exitCode === null) process.kill(-child.pid, 'SIGKILL');
  child = undefined;
});

/** Starts `npm start` in its own process group; resolves once the bridge says it started. */
async function npmStart(queuePrefix: string) {
  const c = spawn('npm', ['start'], {
    cwd: process.cwd(),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', REDIS_URL, QUEUE_PREFIX: queuePrefix, HTTP_PORT: '0', LOG_LEVEL: 'info' },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = c;
  let stdout = '';
  c.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  c.stderr!.resume();
  // 'close', not 'exit': the process can exit before its last stdout lines are read.
  const exited = new Promise<number | null>((resolve) => c.once('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not start in 60 s; stdout: ${stdout.slice(-500)}`)), 60_000);
    const check = () => {
      if (!stdout.includes('"msg":"agent-bridge started"')) return;
      clearTimeout(timer);
      c.stdout!.off('data', check);
      resolve();
    };
    c.stdout!.on('data', check);
    void exited.then((code) => reject(new Error(`npm start exited with ${code} before it started; stdout: ${stdout.slice(-500)}`)));
  });
  return { pid: c.pid!, exited, stdout: () => stdout };
}

function expectGracefulStop(stdout: string) {
  const lines = stdout.trim().split('\n');
  for (const line of lines) expect(() => JSON.parse(line), `not a JSON line: ${line}`).not.toThrow();
  const messages = lines.map((l) => (JSON.parse(l) as { msg: string }).msg);
  expect(messages).toContain('signal received');
  expect(messages.at(-1)).toBe('stopped');
  expect(messages).not.toContain('second signal: exiting now');
}

describe('npm start and signals', () => {
  it('SIGTERM to the process group: one graceful shutdown, exit 0, stdout pure JSON lines', async () => {
    const run = await npmStart(`${prefix}-group`);
    process.kill(-run.pid, 'SIGTERM');
    expect(await run.exited).toBe(0);
    expectGracefulStop(run.stdout());
  }, 90_000);

  it('SIGTERM to npm alone reaches the bridge: graceful shutdown, nothing left running', async () => {
    const run = await npmStart(`${prefix}-npm`);
    process.kill(run.pid, 'SIGTERM');
    await run.exited;
    expectGracefulStop(run.stdout());
    // No process of the group survives (the bridge is npm's shell, replaced by `exec`).
    await new Promise((r) => setTimeout(r, 200));
    expect(() => process.kill(-run.pid, 0)).toThrow();
  }, 90_000);
});
