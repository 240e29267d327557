import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const entry = fileURLToPath(new URL('./slack-ingress-entry.ts', import.meta.url));

/** One `ROLE=ingress` child process and the JSON log lines it wrote. */
export interface IngressReplica {
  child: ChildProcess;
  port: number;
  /** Parsed log lines whose `msg` matches. */
  logs(msg: RegExp): Array<Record<string, unknown>>;
  output(): string;
  kill9(): Promise<void>;
}

/** Starts a Slack ingress replica with only the given environment; resolves once it is reachable. */
export async function startIngressReplica(env: Record<string, string>): Promise<IngressReplica> {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ROLE: 'ingress', HTTP_PORT: '0', PLAYGROUND: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`ingress did not start: ${out}`)), 30_000);
    const onData = () => {
      const m = /^ready (\d+)$/m.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      resolve(Number(m[1]));
    };
    child.stdout!.on('data', onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`ingress exited: ${out}`));
    });
  });
  return {
    child,
    port,
    output: () => out,
    logs: (msg) =>
      out
        .split('\n')
        .flatMap((line) => {
          try {
            return [JSON.parse(line) as Record<string, unknown>];
          } catch {
            return [];
          }
        })
        .filter((l) => typeof l.msg === 'string' && msg.test(l.msg)),
    async kill9() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
