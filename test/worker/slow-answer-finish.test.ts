import { afterEach, describe, expect, it } from 'vitest';
import { startPipeline, webMessage, type Pipeline } from '../support/pipeline.js';

/**
 * A message alone in its mailbox is finished by its job's completion, in BullMQ's own round
 * trip (src/queue/fetch-acquire.ts), however long the agent took: a slow answer needs no
 * separate advance, and a message that came during the call goes to a new job, in order.
 */
let p: Pipeline | undefined;
afterEach(async () => {
  await p?.close();
  p = undefined;
});

const chunksIn = (pl: Pipeline, channelId: string) => pl.sink.posts.filter((x) => x.channelId === channelId && x.kind === 'chunk').map((x) => x.text);

describe('a slow answer alone in its mailbox', () => {
  it('is finished by the job completion, and a follow-up sent during the call is handed to a new job and answered after it', async () => {
    p = await startPipeline();
    const pl = p;
    const steps = pl.bridge.worker!.steps;
    // Longer than a turn (250 ms): the answer is "slow".
    pl.agent.setDelay(600, { endpoint: 'chat' });

    const first = webMessage('first question', { channelId: 'c1' });
    await pl.bridge.ingress.handle(first);
    await expect.poll(() => pl.agent.chatCalls().length, { timeout: 10_000 }).toBe(1);
    const second = webMessage('second question', { channelId: 'c1' });
    await pl.bridge.ingress.handle(second);

    await pl.sink.waitFor(() => chunksIn(pl, 'c1').length === 2, 20_000);
    expect(chunksIn(pl, 'c1')).toEqual([expect.stringContaining('first question'), expect.stringContaining('second question')]);
    expect(pl.agent.chatCalls().map((c) => c.message)).toEqual(['first question', 'second question']);
    // Both finished in BullMQ's round trip; the first handed the second to a new job.
    await expect.poll(() => steps.advancedOnFinish, { timeout: 5_000 }).toBe(2);
    expect(steps.handedOff).toBe(1);
  });

  it("hands the follow-up on with its channel's backlog as priority, so a busy channel does not pass a quieter one", async () => {
    p = await startPipeline();
    const pl = p;
    pl.agent.setDelay(600, { endpoint: 'chat' });
    const first = webMessage('thread a, first', { channelId: 'c1', threadId: 'ta' });
    await pl.bridge.ingress.handle(first);
    await expect.poll(() => pl.agent.chatCalls().length, { timeout: 10_000 }).toBe(1);
    // During the call: a follow-up in the same thread and a message in another thread of the
    // same channel. The channel then has two unfinished messages besides the one answered.
    await pl.bridge.ingress.handle(webMessage('thread a, second', { channelId: 'c1', threadId: 'ta' }));
    await pl.bridge.ingress.handle(webMessage('thread b', { channelId: 'c1', threadId: 'tb' }));

    await pl.sink.waitFor(() => chunksIn(pl, 'c1').length === 3, 20_000);
    expect(pl.bridge.worker!.steps.handedOff).toBe(1);
    const jobs = await pl.bridge.queue.queue.getJobs(['completed', 'active', 'prioritized', 'waiting']);
    const handedOn = jobs.filter((j) => j.id?.includes('-h-'));
    expect(handedOn).toHaveLength(1);
    expect(Number(handedOn[0]!.priority)).toBe(2);
  });
});
