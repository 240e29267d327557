import { describe, expect, it } from 'vitest';
import { closeAfterEach } from '../support/close-after-each.js';
import { startPipeline, webMessage } from '../support/pipeline.js';

const closing = closeAfterEach();

/**
 * A message whose conversation a job already holds queues no job of its own: the holder
 * answers it in turn (one BullMQ add, fetch and completion saved per message of a busy
 * conversation), and order and exactly-once hold.
 */
describe('messages behind a holder', () => {
  it('queue no job; the holder answers them in order, each once', async () => {
    const pl = closing(await startPipeline({ LOG_LEVEL: 'warn' }));
    pl.agent.setDelay(600, { endpoint: 'chat' });
    const first = webMessage('first', { threadId: 't-held' });
    await pl.bridge.ingress.handle(first);
    await pl.agent.waitForCalls(1, (c) => c.endpoint === 'chat');
    const later = ['second', 'third', 'fourth'].map((text) => webMessage(text, { threadId: 't-held' }));
    for (const m of later) expect(await pl.bridge.ingress.handle(m)).toMatchObject({ status: 'queued' });
    // One job in all: the first message's, which holds the conversation.
    const counts = await pl.bridge.queue.queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'completed');
    expect(Object.values(counts).reduce((a, b) => a + (b ?? 0), 0)).toBe(1);
    await pl.sink.waitFor((posts) => posts.filter((x) => x.kind === 'chunk').length === 4, 20_000);
    expect(pl.sink.posts.filter((x) => x.kind === 'chunk').map((x) => x.messageId)).toEqual([first, ...later].map((m) => m.messageId));
    expect(pl.agent.chatCalls()).toHaveLength(4);
  });

  it("arriving before their conversation's job has run, they queue none either: that job answers them all, in order", async () => {
    const pl = closing(await startPipeline({ LOG_LEVEL: 'warn' }));
    // Paused: the first message's job waits in the queue, as behind other channels' work.
    await pl.bridge.queue.queue.pause();
    const messages = ['one', 'two', 'three', 'four'].map((text) => webMessage(text, { threadId: 't-early' }));
    for (const m of messages) expect(await pl.bridge.ingress.handle(m)).toMatchObject({ status: 'queued' });
    const counts = await pl.bridge.queue.queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'completed');
    expect(Object.values(counts).reduce((a, b) => a + (b ?? 0), 0)).toBe(1);
    await pl.bridge.queue.queue.resume();
    await pl.sink.waitFor((posts) => posts.filter((x) => x.kind === 'chunk').length === 4, 20_000);
    expect(pl.sink.posts.filter((x) => x.kind === 'chunk').map((x) => x.messageId)).toEqual(messages.map((m) => m.messageId));
    expect(pl.agent.chatCalls()).toHaveLength(4);
  });
});
