import { afterEach, describe, expect, it, vi } from 'vitest';
import { EARLY_CHANGE_SECONDS, keepEarlyChange } from '../../src/queue/early-change.js';
import { message, useMailbox } from './mailbox-fixture.js';

/**
 * Ingress and worker processes on several machines share one Redis, and their clocks may be
 * minutes apart (a VM resumed from pause, a host without NTP). What one process writes as a
 * time and another compares must be Redis's time, never either caller's.
 */
const { ctx } = useMailbox('clock');
const TEN_MINUTES = 10 * 60_000;

/** Runs `fn` as a process whose clock is `offsetMs` off the others'. */
async function skewed<T>(offsetMs: number, fn: () => Promise<T>): Promise<T> {
  const real = Date.now.bind(Date);
  const spy = vi.spyOn(Date, 'now').mockImplementation(() => real() + offsetMs);
  try {
    return await fn();
  } finally {
    spy.mockRestore();
  }
}

afterEach(() => vi.restoreAllMocks());

describe('the stranded sweep across machines whose clocks disagree', () => {
  it('a conversation pushed just now by an ingress whose clock is 10 min behind is not stranded (its job is on its way)', async () => {
    const m = message('web:local:c1:behind');
    await skewed(-TEN_MINUTES, () => ctx.mailbox.push(m));
    expect(await ctx.mailbox.stranded(10_000, 100)).toEqual([]);
  });

  it('a worker whose clock is 10 min ahead does not take a fresh conversation for a stranded one', async () => {
    const m = message('web:local:c1:ahead');
    await ctx.mailbox.push(m);
    expect(await skewed(TEN_MINUTES, () => ctx.mailbox.stranded(10_000, 100))).toEqual([]);
    expect(await skewed(30_000, () => ctx.mailbox.stranded(10_000, 100))).toEqual([]);
  });

  it('a worker whose clock is 10 min behind still finds a stranded conversation when it is due (healing is not put off by the skew)', async () => {
    const m = message('web:local:c1:late');
    await ctx.mailbox.push(m);
    const found = await skewed(-TEN_MINUTES, () => ctx.mailbox.stranded(0, 100));
    expect(found.map((s) => s.messageId)).toEqual([m.messageId]);
  });

  it('a conversation re-scored by a worker whose clock is behind is not looked at again at once by a worker with the right time', async () => {
    const m = message('web:local:c1:rescored');
    await ctx.mailbox.push(m);
    await new Promise((r) => setTimeout(r, 5));
    expect((await skewed(-TEN_MINUTES, () => ctx.mailbox.stranded(-TEN_MINUTES, 100))).length).toBe(1);
    expect(await ctx.mailbox.stranded(60_000, 100)).toEqual([]);
  });
});

describe("a channel's unfinished messages across machines whose clocks disagree", () => {
  it('counts a message pushed by an ingress whose clock is behind by more than a message lives, and the cap holds', async () => {
    // The lifetime is a week; a clock a week and a minute behind stands for a shorter lifetime with minutes of skew.
    const weekAndAMinute = 7 * 24 * 3_600_000 + 60_000;
    const first = message('web:local:c7:1', 'c7');
    await skewed(-weekAndAMinute, () => ctx.mailbox.push(first, 1));
    expect(await ctx.mailbox.unfinishedIn('web', 'c7')).toBe(1);
    const second = message('web:local:c7:2', 'c7');
    expect((await ctx.mailbox.push(second, 1)).status).toBe('busy');
  });
});

describe('an edit or deletion that came before its message, on an ingress whose clock is off', () => {
  const keep = (m: { conversationId: string; messageId: string }, sentAt: number) =>
    keepEarlyChange(ctx.redis, ctx.mailbox.keys, { platform: 'web', ...m }, { kind: 'delete' }, { sentAt }, 'R1');

  it("is kept for a message sent a moment ago by the platform's clock, whether the ingress's is 10 min ahead or behind", async () => {
    for (const offset of [TEN_MINUTES, -TEN_MINUTES, 30_000, -30_000]) {
      const m = message(`web:local:early:${offset}`);
      const sentAt = Date.now() - 2_000;
      expect(await skewed(offset, () => keep(m, sentAt))).toBe('kept');
      await ctx.mailbox.push(m);
      // The push that stores it applies the deletion: no call starts for it.
      expect(await ctx.redis.hget(ctx.mailbox.keys.messages(m.conversationId), `${m.messageId}:gaveUp`)).not.toBeNull();
    }
  });

  it('is not kept for a message sent longer ago than a change is kept, however the ingress clock is set', async () => {
    const m = message('web:local:early:old');
    const sentAt = Date.now() - (EARLY_CHANGE_SECONDS + 60) * 1000;
    expect(await skewed(-TEN_MINUTES, () => keep(m, sentAt))).toBe('old');
    expect(await ctx.redis.exists(ctx.mailbox.keys.earlyChange(m.conversationId, m.messageId))).toBe(0);
  });
});
