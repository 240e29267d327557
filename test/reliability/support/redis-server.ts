import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freeLoopbackPort } from '../../../src/free-port.js';

/**
 * A private redis-server for tests that stop and restart Redis (the shared one on 6379 must
 * never be touched). With `appendonly` the data survives a restart, as with production AOF.
 */
export class OwnRedis {
  private child?: ChildProcess;
  private readonly dir = mkdtempSync(join(tmpdir(), 'reliability-redis-'));
  port = 0;

  constructor(private readonly options: { appendonly: boolean } = { appendonly: true }) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  async start(): Promise<this> {
    if (this.port === 0) this.port = await freeLoopbackPort();
    // appendfsync always, as docker-compose.yml runs it: with the default everysec a crash (the
    // SIGKILL below) loses up to a second of writes Redis already acknowledged.
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--dir', this.dir, '--appendonly', this.options.appendonly ? 'yes' : 'no', '--appendfsync', 'always'];
    const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 10_000);
      const onData = (d: Buffer) => {
        out += d.toString();
        if (/Ready to accept connections/i.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited (${code}): ${out}`));
      });
    });
    child.stdout!.resume();
    child.stderr!.resume();
    // AOF loading may still run after the banner: wait until it answers.
    const probe = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => 50 });
    try {
      for (let i = 0; i < 100; i++) {
        try {
          await probe.connect().catch(() => undefined);
          if ((await probe.ping()) === 'PONG') break;
        } catch {
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    } finally {
      probe.disconnect();
    }
    return this;
  }

  /** Stops the server: SIGKILL is a crash (AOF already written to the OS), SIGTERM a clean shutdown. */
  async stop(signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async close(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
