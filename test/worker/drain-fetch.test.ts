import { describe, expect, it } from 'vitest';
import { encodeConversationId } from '../../src/core/conversation.js';
import { ingressWithWorkerProcesses, kill9, spawnWorker, workerEnvFor } from '../support/child-worker.js';
import { inProcessWorkers } from '../support/in-process-worker.js';
import { webMessage } from '../support/pipeline.js';

/**
 * SIGTERM reaches a worker while BullMQ is handing it its next job (the completion of the job
 * before fetched it in the same round trip, as it does under load): the draining worker calls
 * nothing for that job and puts it back in line. Its read had marked the call started, so unless
 * that mark is taken back, the next worker's call counts as the message's second, and one crash
 * during it (the rolling restart reaching that worker too) ends the message with "the answer was
 * lost" although it was called only once.
 */
const { children, startIngress } = ingressWithWorkerProcesses();
const { startInProcessWorker } = inProcessWorkers();

describe('SIGTERM as the worker is handed its next job', () => {
  it('the job goes back in line uncalled and not counted as a call: a crash during its one call is retried, not "answer lost"', async () => {
    const pl = await startIngress();
    const [first, next] = [webMessage('answered before the stop', { channelId: 'c1' }), webMessage('fetched as the drain began', { channelId: 'c2' })];
    for (const m of [first, next]) await pl.bridge.ingress.handle(m);
    const { worker: w1 } = startInProcessWorker(pl);
    // BullMQ's completion of the first job fetches the next in the same round trip; the
    // shutdown begins right then, before that job runs.
    let closing: Promise<void> | undefined;
    w1.workers[0]!.once('completed', () => {
      closing = w1.close(5_000);
    });
    await pl.sink.waitFor((posts) => posts.some((x) => x.messageId === first.messageId), 10_000);
    await until(() => closing !== undefined, 5_000);
    await closing;
    expect(pl.agent.chatCalls().map((c) => c.message)).toEqual([first.text]);
    const messages = pl.bridge.queue.mailbox.keys.messages(encodeConversationId(next.conversation));
    expect(await pl.bridge.redis.hget(messages, `${next.messageId}:started`), 'calls counted for the message nobody called').toBeNull();

    // The next worker calls it once and is SIGKILLed during that call: the one after calls again.
    const env = workerEnvFor(pl);
    pl.agent.hangNext(1, { endpoint: 'chat' });
    const w2 = await spawnWorker(env);
    children.push(w2);
    await pl.agent.waitForCalls(2, (c) => c.endpoint === 'chat');
    await kill9(w2);
    children.push(await spawnWorker(env));
    await pl.sink.waitFor((posts) => posts.some((x) => x.messageId === next.messageId), 20_000);
    expect(pl.sink.posts.filter((x) => x.messageId === next.messageId).map((x) => x.kind)).toEqual(['chunk']);
    expect(pl.agent.chatCalls().filter((c) => c.message === next.text)).toHaveLength(2);
  }, 60_000);
});

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}
