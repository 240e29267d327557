import { describe, expect, it } from 'vitest';
import type { IncomingMessage } from '../../src/core/message.js';
import { pushWithoutJob, webMessage, type Pipeline } from '../support/pipeline.js';
import { ingressWithWorkerProcesses, kill9, spawnWorker, workerEnvFor } from '../support/child-worker.js';

const { children, startIngress } = ingressWithWorkerProcesses();

/** Ingress in this process; workers are separate processes that the test kills with SIGKILL. */
async function setup() {
  const p = await startIngress();
  const env = workerEnvFor(p);
  const start = async () => {
    const child = await spawnWorker(env);
    children.push(child);
    return child;
  };
  return { pl: p, start };
}

/** `m` is answered, and 1.5 s later still posted once only, the agent asked `chatCalls` times in all. */
async function expectPostedOnce(pl: Pipeline, m: IncomingMessage, chatCalls: number) {
  await pl.sink.waitFor((posts) => posts.some((x) => x.messageId === m.messageId), 20_000);
  await new Promise((r) => setTimeout(r, 1500));
  expect(pl.sink.posts.filter((x) => x.messageId === m.messageId)).toHaveLength(1);
  expect(pl.agent.chatCalls()).toHaveLength(chatCalls);
}

describe('a worker killed with SIGKILL mid-job', () => {
  it('while it waits for the agent: after recovery the agent is asked again and the reply posted once', async () => {
    const { pl, start } = await setup();
    const first = await start();
    pl.agent.hangNext(1, { endpoint: 'chat' });
    const m = webMessage('survive the crash');
    await pl.bridge.ingress.handle(m);
    await pl.agent.waitForCalls(1, (c) => c.endpoint === 'chat');
    await kill9(first);
    await start();
    await expectPostedOnce(pl, m, 2);
  });

  it('between the agent answer and the post: the agent is not called again and the reply is posted once', async () => {
    const { pl, start } = await setup();
    const first = await start();
    pl.sink.fail('hang');
    // The post reaches the platform but is never answered: the worker dies right then.
    const killed = new Promise<void>((resolve) => {
      pl.sink.onRequest = () => resolve(kill9(first));
    });
    const m = webMessage('answered before the crash');
    await pl.bridge.ingress.handle(m);
    await killed;
    pl.sink.onRequest = undefined;
    await start();
    await expectPostedOnce(pl, m, 1);
  });

  it('does not strand the later messages of a conversation', async () => {
    const { pl, start } = await setup();
    const first = await start();
    pl.agent.hangNext(1, { endpoint: 'chat' });
    const ms = [webMessage('one'), webMessage('two'), webMessage('three')];
    for (const m of ms) await pl.bridge.ingress.handle(m);
    await pl.agent.waitForCalls(1, (c) => c.endpoint === 'chat');
    await kill9(first);
    await start();
    await pl.sink.waitFor((posts) => posts.length >= 3, 20_000);
    expect(pl.sink.posts.map((x) => x.messageId)).toEqual(ms.map((m) => m.messageId));
  });

  it('a message accepted just before a crash, with no job queued yet, is answered after restart', async () => {
    const { pl, start } = await setup();
    // What the ingress had done when it died: the message is in its mailbox, its job never added.
    const m = webMessage('accepted, then the process died');
    await pushWithoutJob(pl, m);
    await start();
    await pl.sink.waitFor((posts) => posts.some((x) => x.messageId === m.messageId), 20_000);
    expect(pl.agent.chatCalls()).toHaveLength(1);
  });
});
