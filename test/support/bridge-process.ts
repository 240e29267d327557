import { spawn, type ChildProcess } from 'node:child_process';

/** A bridge entry file run in a child process, and everything it wrote. */
export interface BridgeProcess {
  child: ChildProcess;
  /** stdout and stderr, as they came. */
  output(): string;
  /** Resolves with the exit code (or signal) once the process is gone. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL unless already gone; resolves once it is. */
  kill9(): Promise<void>;
}

export interface StartBridgeProcessOptions {
  /** What the entry prints on stdout once it is ready (matched against all its output). */
  ready: RegExp;
  /** What it is, for the error when it exits or is not ready in time ("worker", "ingress"). */
  what: string;
  timeoutMs: number;
}

/**
 * Runs `entry` with tsx in a child process, with only PATH, HOME and `env` (which names its
 * ROLE) in its environment, on a port of the OS's choosing, without the playground; resolves
 * once its output matches `ready` (with that match), rejects when it exits first.
 */
export async function startBridgeProcess(
  entry: string,
  env: Record<string, string>,
  options: StartBridgeProcessOptions,
): Promise<BridgeProcess & { ready: RegExpExecArray }> {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HTTP_PORT: '0', PLAYGROUND: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const ready = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${options.what} did not start: ${out}`)), options.timeoutMs);
    const onData = () => {
      const m = options.ready.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      resolve(m);
    };
    child.stdout!.on('data', onData);
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`${options.what} exited (${code}): ${out}`));
    });
  });
  return {
    child,
    output: () => out,
    exited,
    ready,
    async kill9() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
