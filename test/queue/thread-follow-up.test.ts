import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { encodeConversationId } from '../../src/core/conversation.js';
import { startPipeline, webMessage, type Pipeline } from '../support/pipeline.js';

let p: Pipeline | undefined;
const redis = new Redis();
afterEach(async () => {
  await p?.close();
  p = undefined;
});
afterAll(() => redis.disconnect());

const DAY = 86_400;

/** The "answered" mark of a thread lives THREAD_FOLLOW_UP_DAYS (its keys are most of Redis's memory at scale). */
describe('THREAD_FOLLOW_UP_DAYS', () => {
  it.each([
    { setting: undefined, days: 30 },
    { setting: '2', days: 2 },
  ])('an answered thread keeps its follow-up mark $days days (setting: $setting)', async ({ setting, days }) => {
    p = await startPipeline({ LOG_LEVEL: 'warn', ...(setting ? { THREAD_FOLLOW_UP_DAYS: setting } : {}) });
    const pl = p;
    const m = webMessage('hello', { channelId: 'c1', threadId: 't1' });
    await pl.bridge.ingress.handle(m);
    await pl.sink.waitFor((posts) => posts.some((x) => x.messageId === m.messageId && x.kind === 'chunk'), 20_000);
    const key = `${pl.prefix}:chat:answered:${encodeConversationId(m.conversation)}`;
    await expect.poll(() => redis.ttl(key)).toBeGreaterThan(days * DAY - 120);
    expect(await redis.ttl(key)).toBeLessThanOrEqual(days * DAY);
  });
});
