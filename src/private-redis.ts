import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { delimiter, join, resolve } from 'node:path';
import { freeLoopbackPort } from './free-port.js';

/**
 * A newcomer's Redis: when `REDIS_URL` is unset and nothing answers at the default address,
 * `npm start` runs the system's `redis-server` on a free loopback port, with its data in
 * `.data/redis`, for as long as the process lives. Nothing is downloaded.
 */

/** The one line printed when no Redis answers and there is no `redis-server` to start. */
export const GET_REDIS_HINT =
  'No Redis answers on 127.0.0.1:6379 and redis-server is not installed: start one with `docker run -d -p 127.0.0.1:6379:6379 redis:7-alpine` (or `docker compose up -d redis`), or install it (Debian/Ubuntu: `sudo apt-get install redis-server`; macOS: `brew install redis`), or set REDIS_URL';

export interface PrivateRedis {
  url: string;
  port: number;
  dataDir: string;
  /** Stops redis-server (it writes its append-only file first); idempotent. */
  stop(): Promise<void>;
}

/** True when something accepts a TCP connection at the URL's host and port. */
export function somethingListens(url: string, timeoutMs = 1_000): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((done) => {
    const socket = connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || 6379) });
    const finish = (answer: boolean) => {
      socket.destroy();
      done(answer);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

/** The `redis-server` executable in `path` (PATH's form), if any. */
export function findRedisServer(path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'redis-server');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not in this directory.
    }
  }
  return undefined;
}

export interface StartPrivateRedisOptions {
  executable: string;
  /** Relative paths are taken from the working directory. */
  dataDir?: string;
}

/** Starts redis-server and resolves once it accepts connections. */
export async function startPrivateRedis(options: StartPrivateRedisOptions): Promise<PrivateRedis> {
  const dataDir = resolve(options.dataDir ?? join('.data', 'redis'));
  mkdirSync(dataDir, { recursive: true });
  // Another program may take the free port between the check and redis-server's bind: try again.
  let lastOutput = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freeLoopbackPort();
    const child = spawn(
      options.executable,
      [
        '--bind', '127.0.0.1',
        '--port', String(port),
        '--dir', dataDir,
        // Queued messages survive a restart of `npm start`, as with the compose file's Redis.
        '--appendonly', 'yes',
        '--save', '',
        '--maxmemory-policy', 'noeviction',
        '--daemonize', 'no',
        '--loglevel', 'warning',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const ready = await untilReady(child, port);
    if (ready.ok) return handle(child, port, dataDir);
    lastOutput = ready.output;
  }
  throw new Error(`redis-server did not start: ${lastOutput.trim().split('\n').slice(-3).join(' ')}`);
}

/** Waits for the port to answer, or for redis-server to exit (bad option, port taken). */
async function untilReady(child: ChildProcess, port: number): Promise<{ ok: boolean; output: string }> {
  let output = '';
  const collect = (d: Buffer) => (output += d.toString());
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  let exited = false;
  child.once('exit', () => (exited = true));
  const deadline = Date.now() + 10_000;
  while (!exited && Date.now() < deadline) {
    if (await somethingListens(`redis://127.0.0.1:${port}`, 500)) {
      child.stdout!.off('data', collect);
      child.stderr!.off('data', collect);
      // Keep draining its output so a chatty redis-server never blocks on a full pipe.
      child.stdout!.resume();
      child.stderr!.resume();
      return { ok: true, output };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  if (!exited) child.kill('SIGKILL');
  return { ok: false, output };
}

function handle(child: ChildProcess, port: number, dataDir: string): PrivateRedis {
  const gone = new Promise<void>((done) => {
    if (child.exitCode !== null || child.signalCode !== null) done();
    else child.once('exit', () => done());
  });
  // Last resort for a normal exit that skipped stop(): never leave redis-server behind.
  const onExit = () => child.kill('SIGTERM');
  process.once('exit', onExit);
  let stopping: Promise<void> | undefined;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dataDir,
    stop() {
      stopping ??= (async () => {
        process.off('exit', onExit);
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await gone;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}
