import { describe, expect, it } from 'vitest';
import { ingressWithWorkerProcesses, spawnWorker, workerEnvFor } from '../support/child-worker.js';
import { inProcessWorkers } from '../support/in-process-worker.js';
import { webMessage } from '../support/pipeline.js';

/**
 * SHUTDOWN_TIMEOUT_MS ran out during an agent call, and the answer came back before the process
 * was gone (its connections still open): the worker starts nothing more for that message, and
 * another worker must finish it.
 */
const { children, startIngress } = ingressWithWorkerProcesses();
const { startInProcessWorker } = inProcessWorkers();

describe('an answer that arrives after the shutdown timed out', () => {
  it('is kept and posted by the next worker: the message is neither dropped nor asked again', async () => {
    const pl = await startIngress();
    const { worker: w1 } = startInProcessWorker(pl);
    pl.agent.hangNext(1, { endpoint: 'chat' });
    const m = webMessage('answered just past the deadline');
    await pl.bridge.ingress.handle(m);
    await pl.agent.waitForCalls(1, (c) => c.endpoint === 'chat');
    await w1.close(200);
    // The billed answer arrives now, before the process exits.
    pl.agent.releaseHanging();
    await until(async () => (await pl.bridge.queue.queue.getActiveCount()) === 0, 5_000);

    children.push(await spawnWorker(workerEnvFor(pl)));
    await pl.sink.waitFor((posts) => posts.some((x) => x.messageId === m.messageId), 15_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(pl.sink.posts.filter((x) => x.messageId === m.messageId).map((x) => x.kind)).toEqual(['chunk']);
    expect(pl.agent.chatCalls().filter((c) => c.message === m.text), 'billed calls').toHaveLength(1);
  }, 40_000);
});

async function until(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}
