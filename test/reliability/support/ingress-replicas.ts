import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startBridgeProcess } from '../../support/bridge-process.js';

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
  const ingress = await startBridgeProcess(entry, { ROLE: 'ingress', ...env }, { ready: /^ready (\d+)$/m, what: 'ingress', timeoutMs: 30_000 });
  const { child, output } = ingress;
  return {
    child,
    port: Number(ingress.ready[1]),
    output,
    logs: (msg) =>
      output()
        .split('\n')
        .flatMap((line) => {
          try {
            return [JSON.parse(line) as Record<string, unknown>];
          } catch {
            return [];
          }
        })
        .filter((l) => typeof l.msg === 'string' && msg.test(l.msg)),
    kill9: ingress.kill9,
  };
}
