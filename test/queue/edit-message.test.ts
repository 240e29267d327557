import { describe, expect, it } from 'vitest';
import { editStoredMessage } from '../../src/queue/edit-message.js';
import { message, useMailbox } from './mailbox-fixture.js';

const { ctx, locked } = useMailbox('edit-message');

/** The edit script against the real Redis: atomic against the read that starts the call. */
describe('editStoredMessage (its sender edited a waiting message)', () => {
  const edit = (m: { conversationId: string; messageId: string }, text: string | undefined) =>
    editStoredMessage(ctx.redis, ctx.mailbox.keys, m.conversationId, m.messageId, text, 'R1');
  const startingRead = async (conversationId: string, jobId: string) =>
    ctx.mailbox.acquire(conversationId, { ...(await locked(jobId)), lockDurationMs: 30_000 }, { startCall: true });

  it('before its call: the read that starts the call returns the edited text, the rest of the record kept', async () => {
    const m = message();
    await ctx.mailbox.push(m);
    expect(await edit(m, 'edited text')).toBe('edited');
    const got = await startingRead(m.conversationId, 'job-e1');
    expect(got.status === 'ok' && got.head?.message).toEqual({ ...m, text: 'edited text' });
    expect(got.status === 'ok' && got.head?.progress.started).toBe(0);
  });

  it('withdrawn before its call: the read starts no call', async () => {
    const m = message();
    await ctx.mailbox.push(m);
    expect(await edit(m, undefined)).toBe('withdrawn');
    const got = await startingRead(m.conversationId, 'job-e2');
    expect(got.status === 'ok' && JSON.parse(got.head!.progress.gaveUp!)).toEqual({ ref: 'R1', withdrawn: true });
  });

  it('once its call started (or it failed once, or waited out a 429), nothing is written; an unknown one is absent', async () => {
    const m = message();
    await ctx.mailbox.push(m);
    await startingRead(m.conversationId, 'job-e3');
    expect(await edit(m, 'too late')).toBe('too_late');
    expect(await edit(m, undefined)).toBe('too_late');
    const raw = await ctx.redis.hget(ctx.mailbox.keys.messages(m.conversationId), m.messageId);
    expect(JSON.parse(raw!).text).toBe(m.text);
    expect(await ctx.redis.hget(ctx.mailbox.keys.messages(m.conversationId), `${m.messageId}:gaveUp`)).toBeNull();

    const retried = message('web:local:c2', 'c2');
    await ctx.mailbox.push(retried);
    await ctx.redis.hset(ctx.mailbox.keys.messages(retried.conversationId), `${retried.messageId}:attempts`, '1');
    expect(await edit(retried, 'after a failed call')).toBe('too_late');
    expect(await edit({ conversationId: m.conversationId, messageId: 'nope' }, 'x')).toBe('absent');
  });
});

describe('editStoredMessage under at-most-once (the worker reads a head without marking it)', () => {
  it('a head a job holds may have been read: too late; one waiting behind it is edited', async () => {
    const head = message('web:local:c3', 'c3');
    const behind = { ...message('web:local:c3', 'c3') };
    await ctx.mailbox.push(head);
    await ctx.mailbox.push(behind);
    // Read only, as at-most-once does: no `started` mark yet.
    await ctx.mailbox.acquire(head.conversationId, await locked('job-e4'));
    const edit = (m: typeof head, text: string) => editStoredMessage(ctx.redis, ctx.mailbox.keys, m.conversationId, m.messageId, text, 'R2', true);
    expect(await edit(head, 'after the read')).toBe('too_late');
    expect(await edit(behind, 'still waiting')).toBe('edited');
    const raw = await ctx.redis.hget(ctx.mailbox.keys.messages(head.conversationId), head.messageId);
    expect(JSON.parse(raw!).text).toBe(head.text);
  });
});
