import { describe, expect, it } from 'vitest';
import { encodeConversationId } from '../../src/core/conversation.js';
import { splitMarkdown } from '../../src/render/split-markdown.js';
import type { ReplyPort } from '../../src/core/reply-port.js';
import { ingressWithWorkerProcesses } from '../support/child-worker.js';
import { inProcessWorkers } from '../support/in-process-worker.js';
import { webMessage } from '../support/pipeline.js';
import { sinkPort } from '../support/sink.js';

/**
 * A reply half posted when its worker stopped is resumed by a worker that renders replies
 * differently: the next release of an upgrade (7711481 split a long table into three Slack
 * messages, this release into two), or other chunk settings. It must post the rest of the
 * chunks the first worker rendered; its own chunk 1 would repeat or skip part of the reply.
 */
const { startIngress } = ingressWithWorkerProcesses();
const { startInProcessWorker } = inProcessWorkers();

/** The sink's port with its own chunk size; `stallAt`: the chunk whose post never returns (the worker stops there). */
function portSplittingAt(url: string, maxChars: number, stallAt?: number): ReplyPort {
  const port = sinkPort(url, maxChars);
  return {
    ...port,
    render: (markdown) => splitMarkdown(markdown, maxChars),
    postChunk: (target, chunk, index, info) => (index === stallAt ? new Promise<never>(() => {}) : port.postChunk(target, chunk, index, info)),
  };
}

describe('a reply half posted before a restart', () => {
  it('goes on with the chunks it was rendered into, whatever the next worker would render', async () => {
    const pl = await startIngress();
    // The first worker posts in small chunks and stops at its second; the next would post the reply whole.
    const { worker: first, redis } = startInProcessWorker(pl, portSplittingAt(pl.sink.url, 60, 1));
    const m = webMessage('a question with a long answer');
    await pl.bridge.ingress.handle(m);
    await pl.sink.waitFor((posts) => posts.some((p) => p.messageId === m.messageId && p.kind === 'chunk'), 15_000);
    const records = pl.bridge.queue.mailbox.keys.messages(encodeConversationId(m.conversation));
    const reply = await until(() => pl.bridge.redis.hget(records, `${m.messageId}:reply`));
    const rendered = splitMarkdown(reply, 60);
    expect(rendered.length).toBeGreaterThan(2);
    // Stopped mid-post, as a SIGKILL would: its lock lapses and the job goes to the next worker.
    redis.disconnect();
    void first.close(0).catch(() => {});
    startInProcessWorker(pl, portSplittingAt(pl.sink.url, 2_000));
    await until(async () => (await pl.bridge.queue.queue.getCompletedCount()) > 0 || undefined, 20_000);
    const posted = pl.sink.posts.filter((p) => p.messageId === m.messageId && p.kind === 'chunk');
    expect(posted.map((p) => p.text)).toEqual(rendered);
    expect(pl.agent.chatCalls().filter((c) => c.message === m.text)).toHaveLength(1);
    // Finished: the stored chunks went with the rest of its record.
    expect(await pl.bridge.redis.hgetall(records)).toEqual({});
  }, 40_000);
});

async function until<T>(read: () => Promise<T | null | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== null && value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}
