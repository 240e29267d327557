import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startBridgeProcess } from '../../support/bridge-process.js';

const entry = fileURLToPath(new URL('./worker-entry.ts', import.meta.url));

/** Settings under which a SIGKILLed worker's job is taken over within seconds. */
export const FAST_TAKEOVER = {
  WORKER_LOCK_DURATION_MS: '2000',
  WORKER_STALLED_INTERVAL_MS: '1000',
  RETRY_BASE_DELAY_MS: '20',
  LOG_LEVEL: 'warn',
} as const;

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
  const worker = await startBridgeProcess(entryFile, { ROLE: 'worker', ...env }, { ready: /^ready$/m, what: 'worker', timeoutMs: 20_000 });
  const { child, exited } = worker;
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  return {
    child,
    pid: child.pid!,
    output: worker.output,
    exited,
    kill9: worker.kill9,
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
