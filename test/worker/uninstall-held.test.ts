import { describe, expect, it } from 'vitest';
import { closeAfterEach } from '../support/close-after-each.js';
import { startPipeline, webMessage } from '../support/pipeline.js';

/**
 * Issue 17: an uninstall removes the workspace's queued work, also the messages queued behind
 * one a worker is answering right now: none of them reaches the agent (and bills) afterwards.
 */
describe('dropWorkspace while a job holds a conversation', () => {
  const closing = closeAfterEach();

  it('the held message finishes; the ones behind it in its conversation are never sent to the agent', async () => {
    const pl = closing(await startPipeline({ LOG_LEVEL: 'warn' }));
    pl.agent.hangNext(1, { endpoint: 'chat' });
    const first = webMessage('being answered', { threadId: 'held' });
    await pl.bridge.ingress.handle(first);
    await pl.agent.waitForCalls(1, (c) => c.endpoint === 'chat');
    const behind = [webMessage('behind one', { threadId: 'held' }), webMessage('behind two', { threadId: 'held' })];
    for (const m of behind) expect((await pl.bridge.ingress.handle(m)).status).toBe('queued');

    await pl.bridge.queue.dropWorkspace('web', 'local');
    pl.agent.releaseHanging();
    await pl.sink.waitFor((posts) => posts.some((x) => x.messageId === first.messageId));
    // A message queued after the uninstall (a new install) is answered: the conversation is free again.
    const later = webMessage('after the uninstall', { threadId: 'held' });
    await pl.bridge.ingress.handle(later);
    await pl.sink.waitFor((posts) => posts.some((x) => x.messageId === later.messageId));
    expect(pl.agent.chatCalls().map((c) => c.message)).toEqual([first.text, later.text]);
    expect(pl.sink.posts.some((x) => behind.some((m) => m.messageId === x.messageId))).toBe(false);
  }, 30_000);
});
