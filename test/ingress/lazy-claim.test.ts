import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import { createSeenLedger } from '../../src/ingress/seen-ledger.js';
import { startPipeline, webMessage, type Pipeline } from '../support/pipeline.js';

/**
 * An adapter may leave its first-delivery claim to the ingress (Slack's message events): the
 * ingress takes it only before a step a repeat must not take again, never to queue.
 * Real Redis, real ingress and worker, the sink as the platform.
 */
let p: Pipeline | undefined;
afterEach(async () => {
  await p?.close();
  p = undefined;
});

async function setup(env: Record<string, string> = {}) {
  p = await startPipeline({ LOG_LEVEL: 'warn', ...env });
  const pl = p;
  const ledger = createSeenLedger({ redis: pl.bridge.redis, prefix: `${pl.prefix}:chat`, logger: createLogger({ level: 'silent', registry: new SecretRegistry() }) });
  /** One delivery's claim, counting how often the ingress took it. */
  const delivery = (messageId: string) => {
    const taken = { count: 0 };
    return { taken, claim: () => (taken.count++, ledger.claim('web', messageId)) };
  };
  return { pl, ledger, delivery };
}

describe('the first-delivery claim, left to the ingress', () => {
  it('a message that is queued takes no claim; its repeat is a duplicate of the push, and is answered once', async () => {
    const { pl, delivery } = await setup();
    const m = webMessage('hello once');
    const [first, second] = [delivery(m.messageId), delivery(m.messageId)];
    expect(await pl.bridge.ingress.handle(m, { claim: first.claim })).toMatchObject({ status: 'queued' });
    expect(await pl.bridge.ingress.handle(m, { claim: second.claim })).toMatchObject({ status: 'duplicate' });
    expect([first.taken.count, second.taken.count]).toEqual([0, 0]);
    await pl.sink.waitFor((posts) => posts.some((x) => x.kind === 'chunk' && x.messageId === m.messageId));
    expect(pl.agent.chatCalls().filter((c) => c.message === 'hello once')).toHaveLength(1);
  });

  it('two deliveries of a message to an unbound channel: one notice, the other is a duplicate', async () => {
    const { pl, delivery } = await setup();
    const m = webMessage('anyone?', { channelId: 'unbound' });
    const results = await Promise.all([delivery(m.messageId), delivery(m.messageId)].map((d) => pl.bridge.ingress.handle(m, { claim: d.claim })));
    expect(results.map((r) => r.status).sort()).toEqual(['dropped', 'duplicate']);
    await pl.sink.waitFor((posts) => posts.some((x) => x.kind === 'notice'));
    await new Promise((r) => setTimeout(r, 200));
    expect(pl.sink.posts.filter((x) => x.kind === 'notice')).toHaveLength(1);
  });

  it('with a quota, a repeat is never charged: the claim comes before the charge', async () => {
    const { pl, delivery } = await setup({ QUOTA_USER_PER_MINUTE: '2' });
    const m = webMessage('count me once');
    const first = delivery(m.messageId);
    expect(await pl.bridge.ingress.handle(m, { claim: first.claim })).toMatchObject({ status: 'queued' });
    expect(first.taken.count).toBe(1);
    expect(await pl.bridge.ingress.handle(m, { claim: delivery(m.messageId).claim })).toMatchObject({ status: 'duplicate' });
    // The second of two allowed messages is still allowed: the repeat took nothing.
    expect(await pl.bridge.ingress.handle(webMessage('my second'))).toMatchObject({ status: 'queued' });
    expect(await pl.bridge.ingress.handle(webMessage('my third'))).toMatchObject({ status: 'dropped', reason: 'over_quota' });
  });

  it('a drop that says nothing (not addressed) takes no claim either', async () => {
    const { pl, delivery } = await setup();
    const m = webMessage('chatter', { mentionsBot: false });
    const d = delivery(m.messageId);
    expect(await pl.bridge.ingress.handle(m, { claim: d.claim })).toEqual({ status: 'dropped', reason: 'not_addressed' });
    expect(d.taken.count).toBe(0);
  });
});
