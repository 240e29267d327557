import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeConversationId } from '../../src/core/conversation.js';
import type { IncomingMessage } from '../../src/core/message.js';
import { closeAfterEach } from '../support/close-after-each.js';
import { pushWithoutJob, startPipeline, webMessage, type Pipeline } from '../support/pipeline.js';

const redis = new Redis();
afterAll(() => redis.disconnect());

const closing = closeAfterEach();

/** The sweep finds `m` and it is answered, the agent asked once; `how` is the log line that says how it was found. */
async function expectSweptAndAnswered(pl: Pipeline, m: IncomingMessage, how: string) {
  // Listed 10 s after it was accepted, swept every 5 s: about 15 s (it was 5 minutes). The
  // deadline leaves room for a machine busy with other work; it still fails a minutes-long sweep.
  await pl.sink.waitFor((posts) => posts.some((x) => x.messageId === m.messageId), 40_000);
  expect(pl.agent.chatCalls()).toHaveLength(1);
  expect(pl.logs.text).toContain(how);
}

describe('the sweep for stranded conversations', () => {
  it('a message accepted while workers run, whose job was never queued (ingress died in between), is answered within seconds', async () => {
    const pl = closing(await startPipeline({ LOG_LEVEL: 'info' }));
    // Workers are up and swept at start; then ingress accepts a message and dies before queueing its job.
    const m = webMessage('stranded while everything runs');
    await pushWithoutJob(pl, m);
    await expectSweptAndAnswered(pl, m, 'woke a conversation whose messages had no job');
  }, 60_000);

  it('a message pushed behind a holder whose job is gone (it failed for good and its wake-up was lost) is answered within seconds', async () => {
    const pl = closing(await startPipeline({ LOG_LEVEL: 'info' }));
    const m = webMessage('behind a holder that is gone', { threadId: 't-gone' });
    // The conversation's lease names a job that no longer exists: the message queues no job of its own.
    await redis.set(pl.bridge.queue.mailbox.keys.lease(encodeConversationId(m.conversation)), 'job-that-is-gone', 'EX', 600);
    expect(await pl.bridge.ingress.handle(m)).toMatchObject({ status: 'queued' });
    await expectSweptAndAnswered(pl, m, 'took over a conversation from a finished job');
  }, 60_000);
});
