import { afterEach, describe, expect, it } from 'vitest';
import { startPipeline, webMessage, type Pipeline } from '../support/pipeline.js';

let p: Pipeline | undefined;
afterEach(async () => {
  await p?.close();
  p = undefined;
});

const chunksOf = (pl: Pipeline) => pl.sink.posts.filter((x) => x.kind === 'chunk');

describe('one busy channel never stalls the others', () => {
  it('a quiet channel is answered before most of a 300-message backlog in another, and the backlog keeps its order per conversation', async () => {
    // Quotas off (the default) and no backlog cap: only the scheduling is under test.
    p = await startPipeline({ WORKER_CONCURRENCY: '10', MAX_PENDING_PER_CHANNEL: '0', LOG_LEVEL: 'warn' });
    const pl = p;
    pl.agent.setDelay(200);
    const THREADS = 30;
    const PER_THREAD = 10;
    const sent = new Map<string, string[]>();
    // Threads in parallel, each thread's messages in order, so the backlog builds up faster than it drains.
    await Promise.all(
      Array.from({ length: THREADS }, async (_, t) => {
        for (let i = 0; i < PER_THREAD; i++) {
          const m = webMessage(`busy t${t} #${i}`, { channelId: 'c1', threadId: `t${t}` });
          sent.set(`t${t}`, [...(sent.get(`t${t}`) ?? []), m.messageId]);
          expect((await pl.bridge.ingress.handle(m)).status).toBe('queued');
        }
      }),
    );
    const answeredBefore = chunksOf(pl).length;
    const quiet = webMessage('a quiet question', { channelId: 'c2' });
    const sentAt = performance.now();
    await pl.bridge.ingress.handle(quiet);
    await pl.sink.waitFor((posts) => posts.some((x) => x.messageId === quiet.messageId), 60_000);
    const quietWaitMs = Math.round(performance.now() - sentAt);
    const busyAnsweredByThen = chunksOf(pl).filter((x) => x.channelId === 'c1').length;
    // First-in-first-out would answer all 300 first. With priorities from each channel's
    // backlog it runs at the next free slot: a few agent latencies, about one round of 10.
    expect(answeredBefore).toBeLessThan(THREADS * PER_THREAD - 100);
    expect(busyAnsweredByThen - answeredBefore).toBeLessThan(60);
    console.log(`[figures] fairness ${JSON.stringify({ backlog: THREADS * PER_THREAD, concurrency: 10, agentDelayMs: 200, answeredBeforeQuietSent: answeredBefore, busyAnsweredWhileQuietWaited: busyAnsweredByThen - answeredBefore, quietWaitMs })}`);

    // Nothing of the busy channel lost or reordered within a conversation.
    await pl.sink.waitFor((posts) => posts.filter((x) => x.kind === 'chunk' && x.channelId === 'c1').length >= THREADS * PER_THREAD, 120_000);
    const byId = chunksOf(pl).filter((x) => x.channelId === 'c1').map((x) => x.messageId);
    expect(new Set(byId).size).toBe(THREADS * PER_THREAD);
    for (const ids of sent.values()) expect(byId.filter((id) => ids.includes(id))).toEqual(ids);
  }, 180_000);
});

describe('MAX_PENDING_PER_CHANNEL and refusal notices', () => {
  it('refuses beyond the cap with one plain-words notice per user, while other channels go on', async () => {
    p = await startPipeline({ MAX_PENDING_PER_CHANNEL: '5', LOG_LEVEL: 'warn' });
    const pl = p;
    // Nothing finishes: the five accepted messages of c1 and the one of c2 hang at the agent.
    pl.agent.hangNext(6, { endpoint: 'chat' });
    const results = [];
    for (let i = 0; i < 8; i++) results.push(await pl.bridge.ingress.handle(webMessage(`flood ${i}`, { channelId: 'c1', threadId: `f${i}` })));
    expect(results.map((r) => r.status)).toEqual(['queued', 'queued', 'queued', 'queued', 'queued', 'dropped', 'dropped', 'dropped']);
    expect(results[5]).toEqual({ status: 'dropped', reason: 'channel_busy' });
    const other = await pl.bridge.ingress.handle(webMessage('another user', { channelId: 'c1', threadId: 'x', userId: 'u2' }));
    expect(other).toEqual({ status: 'dropped', reason: 'channel_busy' });
    expect((await pl.bridge.ingress.handle(webMessage('elsewhere', { channelId: 'c2' }))).status).toBe('queued');

    await pl.sink.waitFor((posts) => posts.filter((x) => x.kind === 'notice').length >= 2, 10_000);
    const notices = pl.sink.posts.filter((x) => x.kind === 'notice');
    // Three refusals of u1 make one notice; u2 gets its own.
    expect(notices).toHaveLength(2);
    expect(notices[0]!.text).toBe('This channel has 5 messages waiting for the agent, the most it may queue. Please send yours again once those are answered.');
    await pl.agent.waitForCalls(6, (c) => c.endpoint === 'chat');
    pl.agent.releaseHanging();
  });

  it("counts each DM channel on its own: one person's flood of DMs never refuses another's", async () => {
    p = await startPipeline({ MAX_PENDING_PER_CHANNEL: '3', LOG_LEVEL: 'warn' });
    const pl = p;
    // Alice's DMs are one conversation: her first call hangs and the rest wait behind it.
    pl.agent.hangNext(2, { endpoint: 'chat' });
    // Every DM has the one binding channel `dm`; each person's DM is a channel of its own.
    const dm = (text: string, user: string) => {
      const m = webMessage(text, { channelId: `D-${user}`, userId: user, isDirect: true, bindingChannelId: 'dm' });
      return pl.bridge.ingress.handle(m);
    };
    const alice = [];
    for (let i = 0; i < 4; i++) alice.push(await dm(`alice ${i}`, 'alice'));
    expect(alice.map((r) => r.status)).toEqual(['queued', 'queued', 'queued', 'dropped']);
    expect(alice[3]).toEqual({ status: 'dropped', reason: 'channel_busy' });
    expect(await dm('bob asks', 'bob')).toMatchObject({ status: 'queued' });
    await pl.agent.waitForCalls(2, (c) => c.endpoint === 'chat');
    pl.agent.releaseHanging();
  });

  it('quota refusals: one notice per user per window, however many messages', async () => {
    p = await startPipeline({ QUOTA_USER_PER_MINUTE: '1', LOG_LEVEL: 'warn' });
    const pl = p;
    const results = [];
    for (let i = 0; i < 20; i++) results.push(await pl.bridge.ingress.handle(webMessage(`q ${i}`, { channelId: 'c2', threadId: `q${i}` })));
    expect(results.filter((r) => r.status === 'queued')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'dropped' && r.reason === 'over_quota')).toHaveLength(19);
    await pl.sink.waitFor((posts) => posts.some((x) => x.kind === 'chunk'), 10_000);
    const notices = pl.sink.posts.filter((x) => x.kind === 'notice');
    expect(notices).toHaveLength(1);
    expect(notices[0]!.text).toMatch(/limit of 1 message per minute/);
  });
});
