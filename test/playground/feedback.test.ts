import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFeedbackStore } from '../../src/feedback/index.js';
import { openSse, payload } from './sse-client.js';
import { post, REDIS_URL, startHarness, type Harness } from './harness.js';

/** The playground's 👍/👎: on the last chunk of a reply, one vote per user per reply. */
describe('playground feedback', () => {
  let h: Harness;
  let redis: Redis;
  beforeAll(async () => {
    h = await startHarness();
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await redis.quit();
    await h.close();
  });

  it('marks only the last chunk of a reply for feedback', async () => {
    const messageId = randomUUID();
    const sse = await openSse(`${h.baseUrl}/playground/events?channel=general`);
    try {
      await sse.waitFor((e) => e.event === 'ready');
      const t = { channelId: 'general', messageId };
      const info = { messageId, total: 2, mayExist: false, agentMessageId: 'msg_7', instanceId: 'inst_a' };
      await h.workerPort.postChunk(t, 'one', 0, info);
      await h.workerPort.postChunk(t, 'two', 1, info);
      await sse.waitFor((e) => e.event === 'message' && payload(e).text === 'two');
      const replies = sse.events.filter((e) => e.event === 'message' && payload(e).replyTo === messageId).map(payload);
      expect(replies[0]!.feedback).toBeUndefined();
      expect(replies[1]!.feedback).toEqual({ instanceId: 'inst_a', agentMessageId: 'msg_7' });
    } finally {
      sse.close();
    }
  });

  it('records a click, replaces a changed vote, and thanks', async () => {
    const vote = (rating: string, userName = 'Ann') => post(h, 'feedback', { channel: 'general', userName, instanceId: 'inst_a', agentMessageId: 'msg_8', rating });
    const first = await vote('positive');
    expect(first).toMatchObject({ status: 200, json: { text: 'Thanks for the feedback!' } });
    await vote('negative');
    await vote('positive', 'Bob');
    expect((await vote('meh')).status).toBe(400);
    const [row] = await createFeedbackStore({ redis, prefix: `${h.prefix}:chat` }).summary({ instanceIds: ['inst_a'] });
    expect(row).toMatchObject({ positive: 1, negative: 1 });
    expect(row!.latestNegative.map((n) => n.agentMessageId)).toEqual(['msg_8']);
  });
});
