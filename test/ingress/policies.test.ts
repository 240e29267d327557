import { afterEach, describe, expect, it } from 'vitest';
import type { Binding } from '../../src/bindings/types.js';
import { startPipeline, webMessage, type Pipeline } from '../support/pipeline.js';

let p: Pipeline | undefined;
afterEach(async () => {
  await p?.close();
  p = undefined;
});

const bind = (pl: Pipeline, channelId: string, over: Partial<Binding>) =>
  pl.bridge.bindings.set('web', channelId, { instanceId: 'demo-helper', mode: 'mention', errorPolicy: 'reply', context: 'off', source: 'admin', ...over });

const caller = { platform: 'web', workspaceId: 'local', channelId: 'c1', userId: 'admin' } as const;

describe('quotas at ingress', () => {
  it('refuses the message over the limit before it is queued, saying when to try again', async () => {
    p = await startPipeline({ QUOTA_USER_PER_MINUTE: '2' });
    for (const text of ['one', 'two']) await expect(p.bridge.ingress.handle(webMessage(text))).resolves.toMatchObject({ status: 'queued' });
    const third = webMessage('three');
    await expect(p.bridge.ingress.handle(third)).resolves.toEqual({ status: 'dropped', reason: 'over_quota' });
    await p.sink.waitFor((posts) => posts.some((x) => x.messageId === third.messageId));
    const notice = p.sink.posts.find((x) => x.messageId === third.messageId)!;
    expect(notice.text).toMatch(/your limit of 2 messages per minute\. Try again in \d+ (seconds?|minute)\./);
    await p.sink.waitFor((posts) => posts.filter((x) => x.kind === 'chunk').length === 2);
    expect(p.agent.chatCalls().map((c) => c.message)).toEqual(['one', 'two']);
    // A redelivery of an accepted message is not charged again.
    const status = await p.bridge.commands.status(caller);
    expect(status.lines.join('\n')).toMatch(/2/);
  });

  it("charges and queues a message an adapter claimed first ('delivered' is not a redelivery), once", async () => {
    p = await startPipeline({ QUOTA_USER_PER_MINUTE: '2' });
    const m = webMessage('claimed');
    await p.bridge.redis.set(p.bridge.queue.mailbox.keys.seen('web', m.messageId), 'delivered', 'EX', 60);
    await expect(p.bridge.ingress.handle(m)).resolves.toMatchObject({ status: 'queued' });
    await expect(p.bridge.ingress.handle(m)).resolves.toMatchObject({ status: 'duplicate' });
    // The redelivery was not charged: one more message still fits in the limit of 2.
    await expect(p.bridge.ingress.handle(webMessage('second'))).resolves.toMatchObject({ status: 'queued' });
  });

  it('a binding override beats the default', async () => {
    p = await startPipeline({ QUOTA_CHANNEL_PER_DAY: '100' });
    await bind(p, 'c1', { quota: { channelPerDay: 1 } });
    await expect(p.bridge.ingress.handle(webMessage('a'))).resolves.toMatchObject({ status: 'queued' });
    await expect(p.bridge.ingress.handle(webMessage('b'))).resolves.toMatchObject({ reason: 'over_quota' });
  });
});

describe('error policy per binding', () => {
  it('reply: a plain-words message and the warning indicator', async () => {
    p = await startPipeline({}, { indicators: true });
    p.agent.failNext(1, { status: 404, body: { error: 'instance not found' } }, { endpoint: 'chat' });
    const m = webMessage('x');
    await p.bridge.ingress.handle(m);
    await p.sink.waitFor((posts) => posts.some((x) => x.kind === 'failed'));
    expect(p.sink.posts.map((x) => x.kind)).toEqual(['working', 'notice', 'failed']);
    expect(p.sink.posts[1]!.text).toMatch(/instance wasn't found.*\(ref [A-Z0-9]{6}\)/);
  });

  it.each([
    { policy: 'reaction', what: 'only the warning indicator', last: 'failed', kinds: ['working', 'failed'], log: undefined },
    { policy: 'silent', what: 'nothing but the log line', last: 'done', kinds: ['working', 'done'], log: 'gave up on a message' },
  ] as const)('$policy: $what', async ({ policy, last, kinds, log }) => {
    p = await startPipeline({}, { indicators: true });
    await bind(p, 'c1', { errorPolicy: policy });
    p.agent.failNext(1, { status: 400 }, { endpoint: 'chat' });
    await p.bridge.ingress.handle(webMessage('x'));
    await p.sink.waitFor((posts) => posts.some((x) => x.kind === last));
    expect(p.sink.posts.map((x) => x.kind)).toEqual(kinds);
    if (log) expect(p.logs.text).toContain(log);
  });
});

describe('thread context (opt-in per binding)', () => {
  const thread = [
    { author: 'Ada', text: 'Our build fails on Node 20.', isBot: false },
    { author: 'agent', text: 'Which error do you see?', isBot: true },
  ];

  it('prefixes the message with the thread transcript, speakers labelled', async () => {
    p = await startPipeline({}, { indicators: true, thread });
    await bind(p, 'c1', { context: 'thread' });
    await p.bridge.ingress.handle(webMessage('ERR_REQUIRE_ESM', { threadId: 't1' }));
    await p.agent.waitForCalls(1, (c) => c.endpoint === 'chat');
    expect(p.agent.chatCalls()[0]!.message).toBe(
      'Earlier messages in this thread:\nAda: Our build fails on Node 20.\nagent (bot): Which error do you see?\n\nNew message from Ada:\nERR_REQUIRE_ESM',
    );
  });

  it('is off by default', async () => {
    p = await startPipeline({}, { indicators: true, thread });
    await p.bridge.ingress.handle(webMessage('ERR_REQUIRE_ESM', { threadId: 't1' }));
    await p.agent.waitForCalls(1, (c) => c.endpoint === 'chat');
    expect(p.agent.chatCalls()[0]!.message).toBe('ERR_REQUIRE_ESM');
  });
});

describe('why no answer', () => {
  it('lists the reasons of the last dropped and failed messages of the channel', async () => {
    p = await startPipeline();
    await p.bridge.ingress.handle(webMessage('just chatting', { mentionsBot: false }));
    await p.bridge.ingress.handle(webMessage('beep', { fromBot: true }));
    p.agent.failNext(1, { status: 400 }, { endpoint: 'chat' });
    await p.bridge.ingress.handle(webMessage('refused'));
    await p.sink.waitFor((posts) => posts.some((x) => x.kind === 'notice'));
    const ref = /ref ([A-Z0-9]{6})/.exec(p.sink.posts.find((x) => x.kind === 'notice')!.text)![1]!;
    const why = (await p.bridge.commands.why(caller)).lines.join('\n');
    expect(why).toMatch(/wasn't addressed/);
    expect(why).toMatch(/bot/i);
    expect(why).toContain(ref);
    expect(p.logs.text).toMatch(/"reason":"not_addressed".*message dropped|message dropped.*not_addressed/);
  });
});

describe('why: queued behind others', () => {
  it('notes a message waiting behind one that is being retried', async () => {
    p = await startPipeline({ RETRY_BASE_DELAY_MS: '1500' });
    p.agent.failNext(1, { status: 503 }, { endpoint: 'chat' });
    await p.bridge.ingress.handle(webMessage('first, retried'));
    await p.agent.waitForCalls(1, (c) => c.endpoint === 'chat');
    await new Promise((r) => setTimeout(r, 200));
    await p.bridge.ingress.handle(webMessage('second, waits'));
    await new Promise((r) => setTimeout(r, 300));
    const why = (await p.bridge.commands.why(caller)).lines.join('\n');
    expect(why).toContain('waiting in line behind earlier messages');
    await p.sink.waitFor((posts) => posts.length === 2, 15_000);
    expect(p.sink.posts.map((x) => x.text).join('\n')).toMatch(/first, retried[\s\S]*second, waits/);
  });
});
