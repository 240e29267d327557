import { afterEach, describe, expect, it } from 'vitest';
import { jobIdFor } from '../../src/queue/types.js';
import { startPipeline, webMessage, type Pipeline } from '../support/pipeline.js';

let p: Pipeline | undefined;
afterEach(async () => {
  await p?.close();
  p = undefined;
});

const chunksFor = (pl: Pipeline, messageId: string) => pl.sink.posts.filter((x) => x.messageId === messageId);

describe('core pipeline: ingress → queue → worker → agent → reply port', () => {
  it('answers a message with the agent reply, in the same channel', async () => {
    p = await startPipeline();
    const m = webMessage('hello there');
    await expect(p.bridge.ingress.handle(m)).resolves.toMatchObject({ status: 'queued' });
    await p.sink.waitFor((posts) => posts.some((x) => x.messageId === m.messageId));
    const [post] = chunksFor(p, m.messageId);
    expect(post).toMatchObject({ kind: 'chunk', channelId: 'c1', index: 0 });
    expect(post!.text).toContain('hello there');
    expect(p.agent.chatCalls()).toHaveLength(1);
    expect(p.agent.chatCalls()[0]).toMatchObject({ instanceId: 'demo-helper', message: 'hello there' });
  });

  it('the same source message enqueued twice makes one job and one agent call', async () => {
    p = await startPipeline();
    const m = webMessage('only once please');
    const [a, b] = await Promise.all([p.bridge.ingress.handle(m), p.bridge.ingress.handle(m)]);
    expect([a.status, b.status].sort()).toEqual(['duplicate', 'queued']);
    await p.sink.waitFor((posts) => posts.some((x) => x.messageId === m.messageId));
    // A late redelivery after the reply must not run again either.
    await expect(p.bridge.ingress.handle(m)).resolves.toMatchObject({ status: 'duplicate' });
    await new Promise((r) => setTimeout(r, 300));
    expect(p.agent.chatCalls()).toHaveLength(1);
    expect(chunksFor(p, m.messageId)).toHaveLength(1);
    const jobs = await p.bridge.queue.queue.getJobs(['completed', 'waiting', 'active', 'delayed']);
    expect(jobs.filter((j) => j.data.messageId === m.messageId)).toHaveLength(1);
  });

  it('keeps order within a conversation and runs conversations in parallel', async () => {
    p = await startPipeline();
    p.agent.setDelay(150);
    const perConversation = 4;
    const channels = ['c1', 'c2'];
    const sent: Record<string, string[]> = { c1: [], c2: [] };
    for (let i = 0; i < perConversation; i++) {
      for (const channelId of channels) {
        const m = webMessage(`${channelId} message ${i}`, { channelId });
        sent[channelId]!.push(m.messageId);
        await p.bridge.ingress.handle(m);
      }
    }
    await p.sink.waitFor((posts) => posts.length === perConversation * channels.length, 20_000);
    for (const channelId of channels) {
      const posted = p.sink.posts.filter((x) => x.channelId === channelId).map((x) => x.messageId);
      expect(posted).toEqual(sent[channelId]);
      const asked = p.agent.chatCalls().filter((c) => c.message.startsWith(channelId)).map((c) => c.message);
      expect(asked).toEqual([...Array(perConversation).keys()].map((i) => `${channelId} message ${i}`));
    }
    // Parallel across conversations: the two channels' first calls reached the agent together.
    const firsts = channels.map((c) => p!.agent.chatCalls().find((x) => x.message === `${c} message 0`)!.at);
    expect(Math.abs(firsts[0]! - firsts[1]!)).toBeLessThan(150);
  });

  it('retries 5xx, timeouts and resets with backoff, then answers', async () => {
    p = await startPipeline({ AGENT_TIMEOUT_MS: '300' });
    p.agent.failNext(1, { status: 503, body: '<html><body>Service Unavailable</body></html>', contentType: 'text/html' }, { endpoint: 'chat' });
    p.agent.hangNext(1, { endpoint: 'chat' });
    p.agent.resetNext(1, { endpoint: 'chat' });
    const m = webMessage('flaky');
    await p.bridge.ingress.handle(m);
    await p.sink.waitFor((posts) => posts.some((x) => x.messageId === m.messageId));
    expect(p.agent.chatCalls()).toHaveLength(4);
    expect(chunksFor(p, m.messageId)).toEqual([expect.objectContaining({ kind: 'chunk' })]);
  });

  it('gives up after the configured attempts and tells the user in plain words with a reference', async () => {
    p = await startPipeline({ JOB_ATTEMPTS: '3' });
    p.agent.failNext(10, { status: 500, body: { error: 'boom' } }, { endpoint: 'chat' });
    const m = webMessage('doomed');
    await p.bridge.ingress.handle(m);
    await p.sink.waitFor((posts) => posts.some((x) => x.messageId === m.messageId));
    expect(p.agent.chatCalls()).toHaveLength(3);
    const [notice] = chunksFor(p, m.messageId);
    expect(notice!.kind).toBe('notice');
    expect(notice!.text).toMatch(/having trouble.*\(ref [A-Z0-9]{6}\)/);
    const ref = /ref ([A-Z0-9]{6})/.exec(notice!.text)![1]!;
    expect(p.logs.text).toContain(ref);
    const failures = await p.bridge.queueInfo.recentFailures(5);
    expect(failures[0]).toMatchObject({ ref, instanceId: 'demo-helper' });
  });

  it('gives up at once on a 4xx or a malformed answer (no retry)', async () => {
    p = await startPipeline();
    p.agent.failNext(1, { status: 400, body: { error: 'message rejected' } }, { endpoint: 'chat' });
    p.agent.malformedNext(1, '{"nope":1}', { endpoint: 'chat' });
    const a = webMessage('bad request', { channelId: 'c1' });
    const b = webMessage('bad body', { channelId: 'c2' });
    await p.bridge.ingress.handle(a);
    await p.bridge.ingress.handle(b);
    await p.sink.waitFor((posts) => posts.filter((x) => x.kind === 'notice').length === 2);
    expect(p.agent.chatCalls()).toHaveLength(2);
    expect(chunksFor(p, a.messageId)[0]!.text).toContain("couldn't accept this message");
    expect(chunksFor(p, b.messageId)[0]!.text).toContain("couldn't be read");
  });

  it('on a 429 waits Retry-After before calling again, without using an attempt', async () => {
    p = await startPipeline({ JOB_ATTEMPTS: '1' });
    p.agent.rateLimitNext(1, 1, { endpoint: 'chat' });
    const m = webMessage('rate limited');
    await p.bridge.ingress.handle(m);
    await p.sink.waitFor((posts) => posts.some((x) => x.messageId === m.messageId && x.kind === 'chunk'));
    const calls = p.agent.chatCalls();
    expect(calls).toHaveLength(2);
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(900);
  });

  it("a conversation's job goes on past its turn while no other job waits: one job answers the whole thread", async () => {
    p = await startPipeline();
    const pl = p;
    // Each answer outlasts a turn (250 ms); nobody else is in line, so going back in line
    // would only be fetched straight back.
    pl.agent.setDelay(300, { endpoint: 'chat' });
    const messages = ['one', 'two', 'three'].map((text) => webMessage(text, { threadId: 't-alone' }));
    for (const m of messages) await pl.bridge.ingress.handle(m);
    await pl.sink.waitFor((posts) => posts.filter((x) => x.kind === 'chunk').length === 3, 20_000);
    expect(pl.sink.posts.filter((x) => x.kind === 'chunk').map((x) => x.messageId)).toEqual(messages.map((m) => m.messageId));
    const jobId = jobIdFor('web', messages[0]!.messageId);
    for (let i = 0; i < 100 && (await pl.bridge.queue.queue.getJobState(jobId)) !== 'completed'; i++) await new Promise((r) => setTimeout(r, 20));
    const done = await pl.bridge.queue.queue.getJob(jobId);
    expect(done?.returnvalue).toEqual({ processed: 3 });
    // It never went back in line (a delayed move each time, before).
    expect(done?.delay ?? 0).toBe(0);
  });

  it('a 429 on a job that went back in line with a priority (its turn was over) resumes after Retry-After too', async () => {
    // Two worker slots: one hangs on c2's question, so c3's job waits in line for the other.
    p = await startPipeline({ JOB_ATTEMPTS: '1', WORKER_CONCURRENCY: '2', BINDINGS: 'web:c1=demo-helper,web:c2=demo-poet,web:c3=demo-poet' });
    const pl = p;
    pl.agent.hangNext(1, { endpoint: 'chat', instanceId: 'demo-poet' });
    await pl.bridge.ingress.handle(webMessage('hangs', { channelId: 'c2' }));
    await pl.agent.waitForCalls(1, (c) => c.endpoint === 'chat');
    // Each answer outlasts a job's turn (250 ms): after the first, with c3's job in line, the
    // job goes back in line with its channel's backlog as priority, although it was queued as
    // a plain job.
    pl.agent.setDelay(300, { endpoint: 'chat' });
    const messages = ['one', 'two', 'three'].map((text) => webMessage(text, { threadId: 't-turns' }));
    for (const m of messages) await pl.bridge.ingress.handle(m);
    const other = webMessage('in line', { channelId: 'c3' });
    await pl.bridge.ingress.handle(other);
    // The emulator answers a fault once the delay is over: set after the first answer, the
    // 429 is the second call of c1's instance.
    await pl.sink.waitFor((posts) => posts.some((x) => x.kind === 'chunk'), 10_000);
    pl.agent.rateLimitNext(1, 1, { endpoint: 'chat', instanceId: 'demo-helper' });
    const startedAt = Date.now();
    // While it waits out Retry-After, the job is a plain waiting one: BullMQ 6 wakes no worker
    // for a rate-limited job that keeps a priority (it sat until the 5 s idle poll).
    const job = await pl.bridge.queue.queue.getJob(jobIdFor('web', messages[0]!.messageId));
    await pl.agent.waitForCalls(2, (c) => c.endpoint === 'chat' && c.instanceId === 'demo-helper');
    let state = await job!.getState();
    while (state === 'active' && Date.now() - startedAt < 3_000) state = (await new Promise((r) => setTimeout(r, 10)), await job!.getState());
    expect(state).toBe('waiting');
    await pl.sink.waitFor((posts) => posts.filter((x) => x.kind === 'chunk').length === 4, 20_000);
    const chunks = pl.sink.posts.filter((x) => x.kind === 'chunk').map((x) => x.messageId);
    // c3's job ran when the first turn ended, before the rest of the thread.
    expect(chunks).toEqual([messages[0]!.messageId, other.messageId, messages[1]!.messageId, messages[2]!.messageId]);
    pl.agent.releaseHanging();
    const calls = pl.agent.chatCalls().filter((c) => c.instanceId === 'demo-helper');
    expect(calls.map((c) => c.message)).toEqual(['one', 'two', 'two', 'three']);
    // Retry-After (1 s) and three answers (about 2 s), not BullMQ's idle poll (5 s) finding a
    // prioritized job that nothing woke: that took 5.9 s before the fix.
    expect(Date.now() - startedAt).toBeLessThan(4_500);
  });

  it('a platform 429 on posting waits and posts once; a 5xx is retried', async () => {
    p = await startPipeline();
    p.sink.fail({ status: 429, retryAfter: 1 }, { status: 502 });
    const m = webMessage('post me');
    await p.bridge.ingress.handle(m);
    await p.sink.waitFor((posts) => posts.some((x) => x.messageId === m.messageId));
    await new Promise((r) => setTimeout(r, 200));
    expect(chunksFor(p, m.messageId)).toHaveLength(1);
    expect(p.agent.chatCalls()).toHaveLength(1);
  });

  it('splits a long reply into ordered chunks', async () => {
    p = await startPipeline();
    const long = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} ${'lorem ipsum '.repeat(20)}`).join('\n\n');
    p.agent.instances.push({ id: 'long', name: 'Long', status: 'running', type: 'assistant' });
    await p.bridge.bindings.set('web', 'c9', { instanceId: 'long', mode: 'mention', errorPolicy: 'reply', context: 'off', source: 'admin' });
    // The emulator's reply function is fixed at start, so ask demo-helper to echo a long text.
    const m = webMessage(long, { channelId: 'c1' });
    await p.bridge.ingress.handle(m);
    await p.sink.waitFor((posts) => posts.filter((x) => x.messageId === m.messageId).length > 1);
    await new Promise((r) => setTimeout(r, 300));
    const chunks = chunksFor(p, m.messageId);
    expect(chunks.map((c) => c.index)).toEqual([...chunks.keys()]);
    for (const c of chunks) expect(c.text.length).toBeLessThanOrEqual(2000);
  });
});

describe('ingress decisions', () => {
  it('takes a message of only invisible characters (zero-width space, word joiner) as empty: no agent call', async () => {
    p = await startPipeline({});
    await expect(p.bridge.ingress.handle(webMessage('\u200B\u200B\u2060 \uFEFF'))).resolves.toEqual({ status: 'dropped', reason: 'empty' });
    expect(p.agent.chatCalls()).toHaveLength(0);
  });

  it('takes the blank letters people send as "empty messages" (Hangul fillers, braille blank, control characters) as empty: no billed call', async () => {
    p = await startPipeline({});
    for (const blank of ['\u3164', '\u115F\u1160', '\uFFA0 \u3164', '\u2800\u2800', '\u0000\u0007', '\uFE0F\u00AD']) {
      await expect(p.bridge.ingress.handle(webMessage(blank)), JSON.stringify(blank)).resolves.toEqual({ status: 'dropped', reason: 'empty' });
    }
    expect(p.agent.chatCalls()).toHaveLength(0);
  });

  it('drops what is not for the bot, and explains what needs explaining', async () => {
    p = await startPipeline({ MAX_MESSAGE_CHARS: '50' });
    const h = p.bridge.ingress;
    await expect(h.handle(webMessage('mine', { fromSelf: true }))).resolves.toEqual({ status: 'dropped', reason: 'self' });
    await expect(h.handle(webMessage('beep', { fromBot: true }))).resolves.toEqual({ status: 'dropped', reason: 'bot' });
    await expect(h.handle(webMessage('hi', { channelId: 'nowhere' }))).resolves.toEqual({ status: 'dropped', reason: 'not_bound' });
    await expect(h.handle(webMessage('chatter', { mentionsBot: false }))).resolves.toEqual({
      status: 'dropped',
      reason: 'not_addressed',
    });
    await expect(h.handle(webMessage('   '))).resolves.toEqual({ status: 'dropped', reason: 'empty' });
    await expect(h.handle(webMessage('x'.repeat(51)))).resolves.toEqual({ status: 'dropped', reason: 'too_long' });
    await p.sink.waitFor((posts) => posts.length === 3);
    const texts = p.sink.posts.map((x) => x.text).join('\n');
    expect(texts).toContain('not connected to an agent');
    expect(texts).toContain('51 characters');
    expect(p.agent.chatCalls()).toHaveLength(0);
  });

  it('answers follow-ups in a thread where the bot already answered, without a mention', async () => {
    p = await startPipeline();
    const first = webMessage('start a thread', { threadId: 't1' });
    await p.bridge.ingress.handle(first);
    await p.sink.waitFor((posts) => posts.length === 1);
    const follow = webMessage('and another thing', { threadId: 't1', mentionsBot: false });
    await expect(p.bridge.ingress.handle(follow)).resolves.toMatchObject({ status: 'queued' });
    const elsewhere = webMessage('unrelated thread', { threadId: 't2', mentionsBot: false });
    await expect(p.bridge.ingress.handle(elsewhere)).resolves.toMatchObject({ status: 'dropped', reason: 'not_addressed' });
  });

  it('answers every message in a channel bound with mode all, and DMs through the dm binding', async () => {
    p = await startPipeline();
    await p.bridge.bindings.set('web', 'open', { instanceId: 'demo-helper', mode: 'all', errorPolicy: 'reply', context: 'off', source: 'admin' });
    await expect(p.bridge.ingress.handle(webMessage('anyone?', { channelId: 'open', mentionsBot: false }))).resolves.toMatchObject({
      status: 'queued',
    });
    await expect(
      p.bridge.ingress.handle(webMessage('direct', { channelId: 'D42', isDirect: true, mentionsBot: false })),
    ).resolves.toMatchObject({ status: 'queued' });
    await p.sink.waitFor((posts) => posts.length === 2);
  });
});
