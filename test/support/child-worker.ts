import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';
import { startBridgeProcess } from './bridge-process.js';
import { startPipeline, type Pipeline } from './pipeline.js';

const entry = fileURLToPath(new URL('./worker-process.ts', import.meta.url));

/** Starts a worker process and resolves once it prints "ready". */
export async function spawnWorker(env: Record<string, string>): Promise<ChildProcess> {
  const worker = await startBridgeProcess(entry, { ROLE: 'worker', ...env }, { ready: /^ready$/m, what: 'worker', timeoutMs: 20_000 });
  return worker.child;
}

export function kill9(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/**
 * The environment of a worker process for `pipeline` (its agent, queue prefix and sink), with
 * short lock timers so a killed worker's job is taken over in seconds; `extra` adds or overrides.
 */
export function workerEnvFor(pipeline: { agent: { baseUrl: string; apiKey: string }; prefix: string; sink: { url: string } }, extra: Record<string, string> = {}): Record<string, string> {
  return {
    AGENT_API_BASE_URL: pipeline.agent.baseUrl,
    AGENT_API_KEY: pipeline.agent.apiKey,
    QUEUE_PREFIX: pipeline.prefix,
    SINK_URL: pipeline.sink.url,
    WORKER_LOCK_DURATION_MS: '1000',
    WORKER_STALLED_INTERVAL_MS: '500',
    LOG_LEVEL: 'warn',
    ...extra,
  };
}

/**
 * Ingress in this process, worker processes beside it: `startIngress` opens the pipeline
 * (`ROLE=ingress`) and `children` keeps the workers a test spawns. After each test the workers
 * are SIGKILLed, then the pipeline closed.
 */
export function ingressWithWorkerProcesses() {
  let pipeline: Pipeline | undefined;
  const children: ChildProcess[] = [];
  afterEach(async () => {
    await Promise.all(children.splice(0).map(kill9));
    await pipeline?.close();
    pipeline = undefined;
  });
  return {
    children,
    startIngress: async (): Promise<Pipeline> => (pipeline = await startPipeline({ ROLE: 'ingress' })),
  };
}
