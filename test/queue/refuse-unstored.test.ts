import { describe, expect, it } from 'vitest';
import { closeAfterEach } from '../support/close-after-each.js';
import { startPipeline, webMessage } from '../support/pipeline.js';

const closing = closeAfterEach();

/**
 * ChatQueue.refuseUnstored (scripts/refuse-unstored-1.lua): after a push went unanswered, says
 * whether the message is stored, and when it is not, makes that final for every caller.
 */
describe('refuseUnstored', () => {
  it('a message not stored is refused for its first caller alone, and a later push of it stores nothing and is never answered', async () => {
    const pl = closing(await startPipeline({ LOG_LEVEL: 'warn' }));
    const q = pl.bridge.queue;
    const m = webMessage('refused before its push ran');
    // A first-delivery claim ('delivered') is no obstacle: nothing is stored yet.
    const seenKey = pl.bridge.queue.mailbox.keys.seen('web', m.messageId);
    await pl.bridge.redis.set(seenKey, 'delivered', 'EX', 60);
    expect(await q.refuseUnstored('web', m.messageId, 'refused:a')).toBe('refused');
    // Asked again with its own mark (an answer lost on the way): still this caller's to tell.
    expect(await q.refuseUnstored('web', m.messageId, 'refused:a')).toBe('refused');
    expect(await q.refuseUnstored('web', m.messageId, 'refused:b')).toBe('refused-elsewhere');
    expect(await pl.bridge.redis.get(seenKey)).toBe('refused:a');
    expect(await pl.bridge.redis.ttl(seenKey)).toBeGreaterThan(3_600);
    // The push that was on its way runs now: it stores nothing.
    expect(await pl.bridge.ingress.handle(m)).toMatchObject({ status: 'duplicate' });
    const control = webMessage('asked after it');
    expect(await pl.bridge.ingress.handle(control)).toMatchObject({ status: 'queued' });
    await pl.sink.waitFor((posts) => posts.some((x) => x.messageId === control.messageId && x.kind === 'chunk'), 20_000);
    expect(pl.sink.posts.filter((x) => x.messageId === m.messageId)).toEqual([]);
    expect(pl.agent.chatCalls().map((c) => c.message)).toEqual([control.text]);
  });

  it('a stored message is stored for every caller', async () => {
    const pl = closing(await startPipeline({ LOG_LEVEL: 'warn' }));
    const m = webMessage('stored before the question');
    expect(await pl.bridge.ingress.handle(m)).toMatchObject({ status: 'queued' });
    expect(await pl.bridge.queue.refuseUnstored('web', m.messageId, 'refused:a')).toBe('stored');
    await pl.sink.waitFor((posts) => posts.some((x) => x.messageId === m.messageId && x.kind === 'chunk'), 20_000);
    expect(await pl.bridge.queue.refuseUnstored('web', m.messageId, 'refused:b')).toBe('stored');
  });

  it("a delivery's lease ('claiming:<token>') is not a store: the message is refused", async () => {
    const pl = closing(await startPipeline({ LOG_LEVEL: 'warn' }));
    const m = webMessage('leased, then Redis stalled before its push');
    const seenKey = pl.bridge.queue.mailbox.keys.seen('web', m.messageId);
    await pl.bridge.redis.set(seenKey, 'claiming:lease-1', 'PX', 5_000);
    expect(await pl.bridge.queue.refuseUnstored('web', m.messageId, 'refused:a')).toBe('refused');
    expect(await pl.bridge.redis.get(seenKey)).toBe('refused:a');
  });
});

