import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createDropLog, describeReason, REASONS, type NoAnswerReason } from '../../src/diagnostics/drop-log.js';
import { cleanup, keysUnder, testRedis } from '../support/redis-helpers.js';

const { redis, prefix } = testRedis();
afterAll(() => cleanup(redis, prefix));

describe('drop log', () => {
  it('keeps the newest entries per channel, capped, with a one-week TTL', async () => {
    const log = createDropLog({ redis, prefix });
    for (let i = 0; i < 60; i++) {
      await log.record('slack', 'C1', { messageId: `m${i}`, userId: 'U1', reason: 'not_addressed', at: 1000 + i });
    }
    await log.record('slack', 'C2', { messageId: 'other', userId: 'U2', reason: 'empty', at: 5 });

    const recent = await log.recent('slack', 'C1', 3);
    expect(recent.map((e) => e.messageId)).toEqual(['m59', 'm58', 'm57']);
    expect(await log.recent('slack', 'C1', 500)).toHaveLength(50);
    expect(await log.recent('slack', 'C2', 5)).toEqual([{ messageId: 'other', userId: 'U2', reason: 'empty', at: 5 }]);
    expect(await log.recent('discord', 'C1', 5)).toEqual([]);
    expect(await log.recent('slack', 'C1', 0)).toEqual([]);

    const key = (await keysUnder(redis, prefix)).find((k) => k.endsWith(':slack:C1'))!;
    expect(await redis.llen(key)).toBe(50);
    const ttl = await redis.ttl(key);
    expect(ttl).toBeGreaterThan(7 * 86_400 - 60);
    expect(ttl).toBeLessThanOrEqual(7 * 86_400);
  });

  it('keeps the reference ID and drops unknown fields', async () => {
    const log = createDropLog({ redis, prefix: `${prefix}:ref` });
    await log.record('discord', '99', { messageId: 'm', userId: 'U', reason: 'agent_refused', at: 1, ref: 'ab12cd34', extra: 'x' } as never);
    expect(await log.recent('discord', '99', 1)).toEqual([{ messageId: 'm', userId: 'U', reason: 'agent_refused', at: 1, ref: 'ab12cd34' }]);
  });

  it('lists "waiting in line" only while the message still waits in its conversation', async () => {
    const p = `${prefix}:waiting`;
    const log = createDropLog({ redis, prefix: p });
    const messages = (conversationId: string) => `${p}:conv:${conversationId}:msgs`;
    await redis.hset(messages('web:local:c1:t1'), 'still-waiting', '{}');
    await log.record('web', 'c1', { messageId: 'answered', userId: 'U', reason: 'queued', at: 1, conversationId: 'web:local:c1:t1' });
    await log.record('web', 'c1', { messageId: 'still-waiting', userId: 'U', reason: 'queued', at: 2, conversationId: 'web:local:c1:t1' });
    await log.record('web', 'c1', { messageId: 'refused', userId: 'U', reason: 'agent_refused', at: 3, ref: 'REF123' });
    expect((await log.recent('web', 'c1', 10)).map((e) => e.messageId)).toEqual(['refused', 'still-waiting']);
  });

  it('skips corrupt entries', async () => {
    const p = `${prefix}:corrupt`;
    const log = createDropLog({ redis, prefix: p });
    await log.record('slack', 'C1', { messageId: 'good', userId: 'U', reason: 'bot', at: 1 });
    await redis.lpush(`${p}:why:slack:C1`, 'not json', JSON.stringify({ messageId: 'x', reason: 'nope' }));
    expect((await log.recent('slack', 'C1', 10)).map((e) => e.messageId)).toEqual(['good']);
  });

  it('never throws from record when Redis is unavailable', async () => {
    const dead = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
    dead.on('error', () => {});
    const debug: unknown[] = [];
    const log = createDropLog({ redis: dead, prefix, logger: { debug: (...a: unknown[]) => void debug.push(a), warn: () => {} } as never });
    await expect(log.record('slack', 'C1', { messageId: 'm', userId: 'U', reason: 'redis_unavailable', at: 1 })).resolves.toBeUndefined();
    expect(debug).toHaveLength(1);
    dead.disconnect();
  });

  it('describes every reason in plain words', () => {
    const reasons: readonly NoAnswerReason[] = REASONS;
    const texts = reasons.map((reason) => describeReason({ reason }));
    expect(new Set(texts).size).toBe(reasons.length);
    // Words, not the stored code (a setting's name, like MAX_PENDING_PER_CHANNEL, may appear).
    reasons.filter((reason) => reason.includes('_')).forEach((reason) => expect(texts.join(' ')).not.toContain(reason));
    expect(describeReason({ reason: 'content_missing' })).toMatch(/Message Content intent/);
    expect(describeReason({ reason: 'agent_refused', ref: 'ab12' })).toBe('the agent service refused the message (reference `ab12`)');
  });
});
