import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const entry = fileURLToPath(new URL('./worker-entry.ts', import.meta.url));

/** A worker child process and everything it wrote. */
export interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  output(): string;
  /** Resolves with the exit code (or signal) once the process is gone. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill9(): Promise<void>;
  /** SIGTERM, then waits for the exit; resolves with how long the process took. */
  term(): Promise<number>;
  /** SIGTERM; if the process is still there after `limitMs`, SIGKILL. Says how long and whether SIGTERM sufficed. */
  termWithin(limitMs: number): Promise<{ ms: number; stoppedBySigterm: boolean }>;
}

/**
 * Starts `support/worker-entry.ts` (or another entry, e.g. `slack-worker-entry.ts`) with only the
 * given environment; resolves once it is ready.
 */
export async function startWorker(env: Record<string, string>, entryFile = entry): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', entryFile], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ROLE: 'worker', HTTP_PORT: '0', PLAYGROUND: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start: ${out}`)), 20_000);
    const onData = () => {
      if (out.includes('ready\n')) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`worker exited (${code}): ${out}`));
    });
  });
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  return {
    child,
    pid: child.pid!,
    output: () => out,
    exited,
    async kill9() {
      if (!gone()) child.kill('SIGKILL');
      await exited;
    },
    async term() {
      const started = Date.now();
      if (!gone()) child.kill('SIGTERM');
      await exited;
      return Date.now() - started;
    },
    async termWithin(limitMs) {
      const started = Date.now();
      if (!gone()) child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const inTime = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), limitMs)))]);
      clearTimeout(timer);
      const ms = Date.now() - started;
      if (!inTime) {
        child.kill('SIGKILL');
        await exited;
      }
      return { ms, stoppedBySigterm: inTime };
    },
  };
}
