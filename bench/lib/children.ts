import { fork, type ChildProcess } from 'node:child_process';
import { readdir, rename, unlink } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { now } from './clock.js';
import type { IpcReady, IpcReply } from './ipc.js';

const live = new Set<Child>();

export interface SpawnOptions {
  /** Name in logs and error messages, and the CPU profile's file name. */
  label: string;
  /** The child's whole environment (besides PATH and HOME): nothing else leaks in. */
  env: Record<string, string>;
  /** Write a CPU profile to bench/results/<label>.cpuprofile when the child exits. */
  profile?: boolean;
  /** @defaultValue 60000 */
  readyTimeoutMs?: number;
}

const resultsDir = fileURLToPath(new URL('../results/', import.meta.url));

/** A bench process (run with tsx, with IPC), its ready value and its recent output. */
export class Child<R = unknown> {
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly tail: string[] = [];
  private exited: Promise<void>;
  readyValue!: R;

  private constructor(
    readonly label: string,
    readonly proc: ChildProcess,
  ) {
    const keep = (d: Buffer) => {
      for (const line of d.toString().split('\n')) if (line.trim()) this.tail.push(line.slice(0, 400));
      if (this.tail.length > 40) this.tail.splice(0, this.tail.length - 40);
    };
    proc.stdout?.on('data', keep);
    proc.stderr?.on('data', keep);
    proc.on('message', (raw) => {
      const m = raw as IpcReply;
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m.value);
      else p.reject(new Error(`${label}: ${m.error}`));
    });
    this.exited = new Promise((resolve) => {
      proc.once('exit', (code, signal) => {
        live.delete(this);
        for (const p of this.pending.values()) p.reject(new Error(`${label} exited (${code ?? signal}): ${this.output()}`));
        this.pending.clear();
        resolve();
      });
    });
  }

  /** Starts `entry` (a .ts file under bench/) and waits for its ready message. */
  static async spawn<R>(entry: URL, o: SpawnOptions): Promise<Child<R>> {
    const execArgv = ['--import', 'tsx', '--expose-gc'];
    // One profile per thread (tsx runs its loader in a second one): see nameProfile.
    if (o.profile) execArgv.push('--cpu-prof', '--cpu-prof-dir', resultsDir);
    const proc = fork(fileURLToPath(entry), [], {
      execArgv,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...o.env },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const child = new Child<R>(o.label, proc);
    if (o.profile) child.exited = child.exited.then(() => nameProfile(proc.pid ?? -1, o.label));
    live.add(child as Child);
    child.readyValue = await new Promise<R>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${o.label} did not start: ${child.output()}`)), o.readyTimeoutMs ?? 60_000);
      proc.on('message', (m) => {
        if ((m as IpcReady).event === 'ready') {
          clearTimeout(timer);
          resolve((m as IpcReady).value as R);
        }
      });
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${o.label} exited (${code}) before it was ready: ${child.output()}`));
      });
    }).catch(async (err: unknown) => {
      await child.kill();
      throw err;
    });
    return child;
  }

  get pid(): number {
    return this.proc.pid ?? -1;
  }

  call<T = unknown>(cmd: string, args?: unknown, timeoutMs = 30_000): Promise<T> {
    const id = ++this.nextId;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${this.label}: ${cmd} got no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (v) => (clearTimeout(timer), resolve(v as T)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      if (!this.proc.connected) return this.pending.get(id)!.reject(new Error(`${this.label} is not running`));
      this.proc.send({ id, cmd, args });
    });
  }

  /**
   * Offset (ms) to subtract from this child's `now()` readings to get the driver's clock:
   * the reply of the fastest of `rounds` pings is taken to be read mid-way.
   */
  async clockOffset(rounds = 30): Promise<number> {
    let best = { rtt: Number.POSITIVE_INFINITY, offset: 0 };
    for (let i = 0; i < rounds; i++) {
      const t0 = now();
      const remote = await this.call<number>('clock');
      const t1 = now();
      if (t1 - t0 < best.rtt) best = { rtt: t1 - t0, offset: remote - (t0 + t1) / 2 };
    }
    return best.offset;
  }

  /** Asks the child to shut down cleanly; kills it after `graceMs`. */
  async stop(graceMs = 15_000): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    await this.call('stop', undefined, graceMs).catch(() => undefined);
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** SIGKILL, by this child's own pid. */
  async kill(): Promise<void> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGKILL');
    await this.exited;
  }

  /** The child's last lines of output, for error messages. */
  output(): string {
    return this.tail.length ? `\n  ${this.tail.slice(-12).join('\n  ')}` : '(no output)';
  }
}

/** Kills every child still running (the driver's last step, also on errors and signals). */
export async function killAll(): Promise<void> {
  await Promise.all([...live].map((c) => c.kill()));
}

/** Stops children in parallel. */
export async function stopAll(children: readonly Child[]): Promise<void> {
  await Promise.all(children.map((c) => c.stop()));
}

/** Keeps the main thread's profile of a child as `<label>.cpuprofile` and drops the loader thread's. */
async function nameProfile(pid: number, label: string): Promise<void> {
  const pattern = new RegExp(`^CPU\\.\\d+\\.\\d+\\.${pid}\\.(\\d+)\\.\\d+\\.cpuprofile$`);
  for (const file of await readdir(resultsDir).catch(() => [] as string[])) {
    const m = pattern.exec(file);
    if (!m) continue;
    if (m[1] === '0') await rename(`${resultsDir}${file}`, `${resultsDir}${label}.cpuprofile`).catch(() => undefined);
    else await unlink(`${resultsDir}${file}`).catch(() => undefined);
  }
}
