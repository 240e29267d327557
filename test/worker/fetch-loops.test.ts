import { afterEach, describe, expect, it } from 'vitest';
import { fetchLoops } from '../../src/worker/chat-worker.js';
import { startPipeline, webMessage, type Pipeline } from '../support/pipeline.js';
import { until } from '../support/until.js';

describe('fetchLoops: WORKER_CONCURRENCY split between BullMQ workers of one process', () => {
  it.each([
    [1, [1]],
    [50, [50]],
    [250, [250]],
    [251, [126, 125]],
    [600, [200, 200, 200]],
    [1001, [201, 200, 200, 200, 200]],
  ])('%i slots → %j', (concurrency, loops) => {
    expect(fetchLoops(concurrency)).toEqual(loops);
  });

  it('keeps every slot and stops at 32 loops', () => {
    const loops = fetchLoops(100_000);
    expect(loops).toHaveLength(32);
    expect(loops.reduce((a, b) => a + b, 0)).toBe(100_000);
  });
});

let p: Pipeline | undefined;
afterEach(async () => {
  await p?.close();
  p = undefined;
});

describe('a worker process with several fetch loops', () => {
  it('holds exactly WORKER_CONCURRENCY calls open at the agent, and answers every message of a backlog once', async () => {
    p = await startPipeline({ WORKER_CONCURRENCY: '600', MAX_PENDING_PER_CHANNEL: '0', LOG_LEVEL: 'warn' });
    const pl = p;
    // Three BullMQ workers, each registered on the queue by its blocking connection.
    await until(async () => (await pl.bridge.queue.queue.getWorkersCount()) === 3, 'three workers on the queue');

    pl.agent.hangNext(600, { endpoint: 'chat' });
    const sent = Array.from({ length: 601 }, (_, i) => webMessage(`backlog ${i}`, { channelId: 'c1', threadId: `t${i}` }));
    for (const m of sent) expect((await pl.bridge.ingress.handle(m)).status).toBe('queued');

    // 600 slots in all: the 601st message waits for one, whichever loop fetched it.
    await until(() => pl.agent.openRequests() === 600, '600 calls open at the agent', 60_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(pl.agent.openRequests()).toBe(600);
    expect(pl.agent.chatCalls()).toHaveLength(600);

    pl.agent.releaseHanging();
    await pl.sink.waitFor((posts) => posts.filter((x) => x.kind === 'chunk').length >= 601, 60_000);
    const answered = pl.sink.posts.filter((x) => x.kind === 'chunk').map((x) => x.messageId);
    expect(new Set(answered)).toEqual(new Set(sent.map((m) => m.messageId)));
    expect(answered).toHaveLength(601);
    expect(pl.agent.chatCalls()).toHaveLength(601);
  }, 120_000);
});
