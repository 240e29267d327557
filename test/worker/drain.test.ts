import { describe, expect, it } from 'vitest';
import { ingressWithWorkerProcesses, spawnWorker, workerEnvFor } from '../support/child-worker.js';
import { webMessage } from '../support/pipeline.js';

/** Ingress in this process; a worker process gets SIGTERM while it answers one of four queued questions. */
const { children, startIngress } = ingressWithWorkerProcesses();

function exited(child: (typeof children)[number]): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
  });
}

async function termDuringTheFirstCall(guarantee: 'at-least-once' | 'at-most-once') {
  const pl = await startIngress();
  // The drain has time for the call under way (1.5 s), not for the three behind it.
  const env = workerEnvFor(pl, { AGENT_CALL_GUARANTEE: guarantee, SHUTDOWN_TIMEOUT_MS: '5000' });
  pl.agent.setDelay(1_500, { endpoint: 'chat' });
  const first = await spawnWorker(env);
  children.push(first);
  const ms = [0, 1, 2, 3].map((i) => webMessage(`q${i} (${guarantee})`));
  for (const m of ms) await pl.bridge.ingress.handle(m);
  await pl.agent.waitForCalls(1, (c) => c.endpoint === 'chat');
  first.kill('SIGTERM');
  const code = await exited(first);
  const callsByTheStoppedWorker = pl.agent.chatCalls().map((c) => c.message);
  children.push(await spawnWorker(env));
  await pl.sink.waitFor((posts) => ms.every((m) => posts.some((x) => x.messageId === m.messageId)), 20_000);
  await new Promise((r) => setTimeout(r, 1_000));
  return { code, ms, callsByTheStoppedWorker, calls: pl.agent.chatCalls().map((c) => c.message), posts: pl.sink.posts };
}

describe('SIGTERM while a conversation has questions queued', () => {
  for (const guarantee of ['at-least-once', 'at-most-once'] as const) {
    it(`${guarantee}: the drain finishes the call under way and starts no other; the next worker answers the rest, each asked once`, async () => {
      const { code, ms, callsByTheStoppedWorker, calls, posts } = await termDuringTheFirstCall(guarantee);
      expect(code).toBe(0);
      expect(callsByTheStoppedWorker).toEqual([ms[0]!.text]);
      expect(calls).toEqual(ms.map((m) => m.text));
      expect(posts.map((x) => [x.messageId, x.kind])).toEqual(ms.map((m) => [m.messageId, 'chunk']));
    }, 60_000);
  }
});
