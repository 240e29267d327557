import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { describeQuotaHit, formatWait } from '../../src/quota/message.js';
import { createQuota, effectiveLimits } from '../../src/quota/quota.js';
import { cleanup, keysUnder, testRedis } from '../support/redis-helpers.js';

const { redis, prefix } = testRedis();
afterAll(() => cleanup(redis, prefix));

const none = { userPerMinute: 0, userPerDay: 0, channelPerMinute: 0, channelPerDay: 0 };

describe('quota', () => {
  it('counts per user and refuses the message over the minute limit, with the time to the reset', async () => {
    const q = createQuota({ redis, prefix: `${prefix}:u`, defaults: { ...none, userPerMinute: 2 } });
    const msg = { platform: 'slack' as const, channelId: 'C1', userId: 'U1' };
    expect(await q.consume(msg)).toEqual({ ok: true });
    expect(await q.consume(msg)).toEqual({ ok: true });
    const hit = await q.consume(msg);
    expect(hit).toMatchObject({ ok: false, scope: 'user', window: 'minute', limit: 2 });
    if (hit.ok) throw new Error('expected a refusal');
    expect(hit.retryAfterMs).toBeGreaterThan(55_000);
    expect(hit.retryAfterMs).toBeLessThanOrEqual(60_000);
    // Another user in the same channel, and the same user ID on another platform, are not affected.
    expect(await q.consume({ ...msg, userId: 'U2' })).toEqual({ ok: true });
    expect(await q.consume({ ...msg, platform: 'discord' })).toEqual({ ok: true });
    // The user limit spans channels.
    expect((await q.consume({ ...msg, channelId: 'C2' })).ok).toBe(false);
  });

  it('counts nothing when a limit refuses (refused messages do not use up the quota)', async () => {
    const p = `${prefix}:nocount`;
    const q = createQuota({ redis, prefix: p, defaults: { ...none, channelPerMinute: 1 } });
    const msg = { platform: 'slack' as const, channelId: 'C1', userId: 'U1' };
    await q.consume(msg);
    for (let i = 0; i < 5; i++) expect((await q.consume(msg)).ok).toBe(false);
    expect(await q.usage({ platform: 'slack', channelId: 'C1' })).toMatchObject({ minute: 1, day: 1 });
    expect(await redis.get(`${p}:{quota}:user:slack:U1:minute`)).toBe('1');
  });

  it('enforces the channel limits and reports the limit that resets last', async () => {
    const q = createQuota({ redis, prefix: `${prefix}:c`, defaults: { ...none, channelPerMinute: 2, channelPerDay: 2 } });
    const msg = { platform: 'discord' as const, channelId: '42', userId: 'A' };
    await q.consume(msg);
    await q.consume({ ...msg, userId: 'B' });
    const hit = await q.consume({ ...msg, userId: 'C' });
    expect(hit).toMatchObject({ ok: false, scope: 'channel', window: 'day', limit: 2 });
    if (hit.ok) throw new Error('expected a refusal');
    expect(hit.retryAfterMs).toBeGreaterThan(86_000_000);
  });

  it('opens a new window when the old one expires', async () => {
    const q = createQuota({
      redis,
      prefix: `${prefix}:w`,
      defaults: { ...none, userPerMinute: 1 },
      windowMs: { minute: 300, day: 5_000 },
    });
    const msg = { platform: 'web' as const, channelId: 'room', userId: 'U1' };
    expect((await q.consume(msg)).ok).toBe(true);
    const hit = await q.consume(msg);
    expect(hit.ok).toBe(false);
    if (!hit.ok) expect(hit.retryAfterMs).toBeLessThanOrEqual(300);
    await sleep(350);
    expect((await q.consume(msg)).ok).toBe(true);
    expect(await q.usage({ platform: 'web', channelId: 'room' })).toMatchObject({ minute: 1, day: 2 });
  });

  it('applies per-binding overrides; 0 means unlimited', async () => {
    const q = createQuota({ redis, prefix: `${prefix}:o`, defaults: { ...none, userPerMinute: 1 } });
    const msg = { platform: 'slack' as const, channelId: 'C1', userId: 'U1', overrides: { userPerMinute: 0, channelPerMinute: 3 } };
    for (let i = 0; i < 3; i++) expect((await q.consume(msg)).ok).toBe(true);
    expect(await q.consume(msg)).toMatchObject({ ok: false, scope: 'channel', window: 'minute', limit: 3 });
    const usage = await q.usage({ platform: 'slack', channelId: 'C1', overrides: msg.overrides });
    expect(usage).toEqual({ minute: 3, day: 3, limits: { ...none, userPerMinute: 0, channelPerMinute: 3 } });
    expect(effectiveLimits(none, { userPerDay: -1, channelPerDay: 1.5, userPerMinute: undefined })).toEqual(none);
  });

  it('gives every key a TTL no longer than its window, under the prefix', async () => {
    const p = `${prefix}:ttl`;
    const q = createQuota({ redis, prefix: p, defaults: none });
    await q.consume({ platform: 'slack', channelId: 'C:1', userId: 'U 1' });
    const keys = await keysUnder(redis, p);
    expect(keys).toHaveLength(4);
    for (const key of keys) {
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(key.endsWith(':minute') ? 60_000 : 86_400_000);
    }
    // A key that somehow lost its TTL gets one back.
    await redis.persist(keys[0]!);
    await q.consume({ platform: 'slack', channelId: 'C:1', userId: 'U 1' });
    expect(await redis.pttl(keys[0]!)).toBeGreaterThan(0);
  });

  it('is atomic under concurrency: exactly the limit gets through', async () => {
    const q = createQuota({ redis, prefix: `${prefix}:race`, defaults: { ...none, channelPerMinute: 10 } });
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => q.consume({ platform: 'slack', channelId: 'C1', userId: `U${i}` })),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(10);
  });
});

describe('quota messages', () => {
  it('rounds waits sensibly and never below the real wait', () => {
    expect(formatWait(0)).toBe('1 second');
    expect(formatWait(999)).toBe('1 second');
    expect(formatWait(41_200)).toBe('42 seconds');
    expect(formatWait(60_000)).toBe('1 minute');
    expect(formatWait(61_000)).toBe('2 minutes');
    expect(formatWait(59 * 60_000)).toBe('59 minutes');
    expect(formatWait(60 * 60_000)).toBe('1 hour');
    expect(formatWait(80 * 60_000)).toBe('1 hour 20 minutes');
    expect(formatWait(5 * 3_600_000 + 60_000)).toBe('6 hours');
    expect(formatWait(Number.NaN)).toBe('1 second');
  });

  it('says which limit was reached and when to try again', () => {
    expect(describeQuotaHit({ ok: false, scope: 'channel', window: 'minute', limit: 5, retryAfterMs: 41_500 })).toBe(
      "You've reached the limit of 5 messages per minute in this channel. Try again in 42 seconds.",
    );
    expect(describeQuotaHit({ ok: false, scope: 'user', window: 'day', limit: 1, retryAfterMs: 3 * 3_600_000 })).toBe(
      "You've reached your limit of 1 message per day. Try again in 3 hours.",
    );
    // A DM's "channel" is the workspace's DMs with the bot: no "in this channel" there.
    expect(describeQuotaHit({ ok: false, scope: 'channel', window: 'minute', limit: 1, retryAfterMs: 20_000 }, { direct: true })).toBe(
      "You've reached the limit of 1 message per minute for direct messages. Try again in 20 seconds.",
    );
  });
});
