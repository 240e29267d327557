import { describe, expect, it } from 'vitest';
import { EARLY_CHANGE_SECONDS, keepEarlyChange, type EarlyChange } from '../../src/queue/early-change.js';
import { editStoredMessage } from '../../src/queue/edit-message.js';
import { message, useMailbox } from './mailbox-fixture.js';
import { DELETED_WHY } from '../../src/queue/types.js';

const { ctx, locked } = useMailbox('early-change');

/**
 * An edit or deletion that came before its message was stored (scripts/early-change-3.lua),
 * applied by the push that stores it (push-7.lua), against the real Redis.
 */
describe('keepEarlyChange, then the push', () => {
  const keep = (m: { conversationId: string; messageId: string }, change: EarlyChange, order?: string, sentAt = Date.now()) =>
    keepEarlyChange(ctx.redis, ctx.mailbox.keys, { platform: 'web', ...m }, change, { sentAt, ...(order ? { order } : {}) }, 'R1');
  const record = async (m: { conversationId: string; messageId: string }) => {
    const raw = await ctx.redis.hget(ctx.mailbox.keys.messages(m.conversationId), m.messageId);
    return raw ? JSON.parse(raw) : undefined;
  };
  const gaveUp = (m: { conversationId: string; messageId: string }) => ctx.redis.hget(ctx.mailbox.keys.messages(m.conversationId), `${m.messageId}:gaveUp`);
  const earlyKey = (m: { conversationId: string; messageId: string }) => ctx.mailbox.keys.earlyChange(m.conversationId, m.messageId);
  const startingRead = async (conversationId: string, jobId: string) =>
    ctx.mailbox.acquire(conversationId, { ...(await locked(jobId)), lockDurationMs: 30_000 }, { startCall: true });

  it('an edit kept before the push: the record is stored with the edited text, the rest as sent, and the change is gone', async () => {
    const m = { ...message(), text: 'my password is hunter2', userName: 'Uma "the" User' };
    // A text that quotes the record's own shape, and one far from ASCII.
    const edited = 'my password is [removed] ,"text":"x"} \\ 🙂 \u2028 é';
    expect(await keep(m, { kind: 'edit', text: edited })).toBe('kept');
    const ttl = await ctx.redis.ttl(earlyKey(m));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(EARLY_CHANGE_SECONDS);
    expect(await ctx.mailbox.push(m)).toMatchObject({ status: 'queued' });
    expect(await record(m)).toEqual({ ...m, text: edited });
    expect(await gaveUp(m)).toBeNull();
    expect(await ctx.redis.exists(earlyKey(m))).toBe(0);
    const got = await startingRead(m.conversationId, 'job-x1');
    expect(got.status === 'ok' && got.head?.message).toEqual({ ...m, text: edited });
  });

  it('a withdrawal (edit or deletion) kept before the push: stored without its text and given up, so no call starts', async () => {
    for (const change of [{ kind: 'edit', text: undefined }, { kind: 'delete' }] as const) {
      const m = { ...message(`web:local:w-${change.kind}`, `w-${change.kind}`), text: 'token xoxp-secret' };
      expect(await keep(m, change)).toBe('kept');
      expect(await ctx.redis.hgetall(earlyKey(m))).not.toHaveProperty('text');
      await ctx.mailbox.push(m);
      expect((await record(m)).text).toBe('');
      // A deletion says so, for the worker's line when it passes the message by.
      const mark = { ref: 'R1', withdrawn: true, ...(change.kind === 'delete' ? { why: DELETED_WHY } : {}) };
      expect(JSON.parse((await gaveUp(m))!)).toEqual(mark);
      const got = await startingRead(m.conversationId, `job-w-${change.kind}`);
      expect(got.status === 'ok' && JSON.parse(got.head!.progress.gaveUp!)).toEqual(mark);
      expect(JSON.stringify(await ctx.redis.hgetall(ctx.mailbox.keys.messages(m.conversationId)))).not.toContain('xoxp-secret');
    }
  });

  it('a later edit replaces an earlier one; an older one arriving late, or any edit after a deletion, does not', async () => {
    const m = message('web:local:order', 'order');
    expect(await keep(m, { kind: 'edit', text: 'second edit' }, '000000000002')).toBe('kept');
    expect(await keep(m, { kind: 'edit', text: 'first edit, late' }, '000000000001')).toBe('superseded');
    expect(await keep(m, { kind: 'edit', text: 'third edit' }, '000000000003')).toBe('kept');
    await ctx.mailbox.push(m);
    expect((await record(m)).text).toBe('third edit');

    const d = message('web:local:order', 'order');
    expect(await keep(d, { kind: 'delete' })).toBe('kept');
    expect(await keep(d, { kind: 'edit', text: 'edited after its deletion' }, '000000000009')).toBe('superseded');
    await ctx.mailbox.push(d);
    expect(JSON.parse((await gaveUp(d))!)).toMatchObject({ withdrawn: true });
  });

  it('a message stored, finished or refused keeps nothing; one sent long ago neither; a first-delivery claim is no store', async () => {
    const stored = message('web:local:s', 's');
    await ctx.mailbox.push(stored);
    expect(await keep(stored, { kind: 'edit', text: 'x' })).toBe('stored');
    const finished = message('web:local:s', 's');
    await ctx.redis.set(ctx.mailbox.keys.seen('web', finished.messageId), 'queued');
    expect(await keep(finished, { kind: 'delete' })).toBe('finished');
    const old = message('web:local:s', 's');
    expect(await keep(old, { kind: 'edit', text: 'x' }, undefined, Date.now() - (EARLY_CHANGE_SECONDS + 60) * 1000)).toBe('old');
    for (const m of [stored, finished, old]) expect(await ctx.redis.exists(earlyKey(m))).toBe(0);

    const claimed = message('web:local:s', 's');
    await ctx.redis.set(ctx.mailbox.keys.seen('web', claimed.messageId), 'claiming:abc');
    expect(await keep(claimed, { kind: 'edit', text: 'claimed, then edited' })).toBe('kept');
    await ctx.mailbox.push(claimed);
    expect((await record(claimed)).text).toBe('claimed, then edited');
  });

  it('a redelivery of a message stored with its early edit stores nothing more', async () => {
    const m = message('web:local:r', 'r');
    await keep(m, { kind: 'edit', text: 'edited' });
    await ctx.mailbox.push(m);
    expect(await ctx.mailbox.push(m)).toMatchObject({ status: 'duplicate' });
    expect((await record(m)).text).toBe('edited');
  });
});

describe('the order of edits once the message is stored (edit-4.lua)', () => {
  const keep = (m: { conversationId: string; messageId: string }, text: string, order: string) =>
    keepEarlyChange(ctx.redis, ctx.mailbox.keys, { platform: 'web', ...m }, { kind: 'edit', text }, { sentAt: Date.now(), order }, 'R1');
  const edit = (m: { conversationId: string; messageId: string }, text: string | undefined, order?: string) =>
    editStoredMessage(ctx.redis, ctx.mailbox.keys, m.conversationId, m.messageId, text, 'R2', false, order);
  const text = async (m: { conversationId: string; messageId: string }) =>
    JSON.parse((await ctx.redis.hget(ctx.mailbox.keys.messages(m.conversationId), m.messageId))!).text;

  it('an edit kept before the store leaves only its order; an older edit arriving after the store changes nothing, a newer one applies', async () => {
    const m = message('web:local:late', 'late');
    await keep(m, 'second edit', '000000000002');
    await ctx.mailbox.push(m);
    expect(await ctx.redis.hgetall(ctx.mailbox.keys.earlyChange(m.conversationId, m.messageId))).toEqual({ at: '000000000002' });
    expect(await edit(m, 'first edit, late', '000000000001')).toBe('outdated');
    expect(await edit(m, undefined, '000000000001')).toBe('outdated');
    expect(await text(m)).toBe('second edit');
    expect(await edit(m, 'third edit', '000000000003')).toBe('edited');
    expect(await edit(m, 'second edit again', '000000000002')).toBe('outdated');
    expect(await text(m)).toBe('third edit');
    // An edit whose order is unknown applies, as before orders were kept.
    expect(await edit(m, 'no order', undefined)).toBe('edited');
    expect(await text(m)).toBe('no order');
  });
});
