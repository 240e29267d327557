import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');
const MAIN = join(ROOT, 'bin', 'agent-bridge.ts');

export interface RunningApp {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  stop(): Promise<number | null>;
}

/**
 * Starts `bin/agent-bridge.ts` as `npm start` does, with only PATH, HOME and `env` in its environment,
 * from an empty working directory so no developer's `.env` is read.
 */
export function spawnApp(env: Record<string, string>): RunningApp {
  const cwd = mkdtempSync(join(tmpdir(), 'agent-bridge-pg-'));
  const child = spawn(TSX, [MAIN], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? cwd, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolveExit) =>
    child.once('exit', (code) => {
      rmSync(cwd, { recursive: true, force: true });
      resolveExit(code);
    }),
  );
  return {
    child,
    output: () => out,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        const code = await exited;
        clearTimeout(timer);
        return code;
      }
      return exited;
    },
  };
}

/** Waits until GET /healthz answers 200, or the process exits. */
export async function waitForHealth(app: RunningApp, baseUrl: string, timeoutMs = 45_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let gone = false;
  void app.exited.then(() => (gone = true));
  while (Date.now() < deadline) {
    if (gone) throw new Error(`the app exited before it was healthy:\n${app.output()}`);
    try {
      const res = await fetch(`${baseUrl}/healthz`);
      if (res.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the app was not healthy within ${timeoutMs} ms:\n${app.output()}`);
}
