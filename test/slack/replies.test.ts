import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SLACK_CHUNK_CHARS } from '../../adapters/slack/render.js';
import { botMention, chatCalls, logLines, postsIn, say, startSlackBridge, until, W, type SlackHarness } from './harness.js';

/** A reply of about 10,000 characters: prose, a long code block, more prose, a short block, an end marker. */
function longReply(): string {
  const prose = (n: number) => Array.from({ length: n }, (_, i) => `Paragraph ${i} explains step ${i} in **bold** and _italics_ with a [link](https://example.com/${i}).`).join('\n\n');
  const code = Array.from({ length: 120 }, (_, i) => `const line${String(i).padStart(3, '0')} = compute(${i}) && check(${i}); // <tag>`).join('\n');
  return [prose(25), '```ts', code, '```', prose(20), '```', 'echo small && done', '```', 'THE END'].join('\n');
}

const CANARY = 'the canary reply';
const agentReply = (_id: string, message: string) => {
  if (message.includes('long one')) return longReply();
  if (message.includes('ping everyone')) return `${CANARY}: hey <!channel> and <!here>, <!everyone>, <@U0123ABC>, <!subteam^S0123|devs> and @here`;
  return `echo: ${message}`;
};

describe('Slack replies', () => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({ mode: 'http', agent: { reply: agentReply }, env: { BINDINGS: `slack:${W.general}=demo-helper,slack:C0NOTIN01=demo-helper` } });
    h.slack.addChannel({ id: 'C0NOTIN01', member: false });
  });
  afterAll(async () => h?.close());

  it('splits a 10,000-character reply with code blocks into chunks within the limit, fences balanced', async () => {
    const m = await say(h, { channel: W.general, text: `${botMention(h)} the long one please` });
    await h.slack.waitForCall('chat.postMessage', (c) => c.params.thread_ts === m.ts && /THE END/.test(c.params.text ?? ''), 15_000);
    const chunks = postsIn(h, W.general, m.ts).map((c) => c.params.text ?? '');
    expect(longReply().length).toBeGreaterThan(9_000);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(SLACK_CHUNK_CHARS);
      const fences = chunk.split('\n').filter((l) => /^```/.test(l)).length;
      expect(fences % 2, `unbalanced fences in:\n${chunk.slice(0, 200)}`).toBe(0);
    }
    const all = chunks.join('\n');
    // Every code line arrives once, in order, escaped; the language tag is dropped.
    const codeLines = all.split('\n').filter((l) => l.startsWith('const line'));
    expect(codeLines).toHaveLength(120);
    expect(codeLines[0]).toBe('const line000 = compute(0) &amp;&amp; check(0); // &lt;tag&gt;');
    expect(codeLines.map((l) => l.slice(10, 13))).toEqual(Array.from({ length: 120 }, (_, i) => String(i).padStart(3, '0')));
    expect(all).not.toContain('```ts');
    expect(all).toContain('<https://example.com/3|link>');
    expect(all).toContain('*bold*');
    expect(chunks.at(-1)).toContain('THE END');
  });

  it('neutralises <!channel>, <!here>, <!everyone>, user and group mentions in the agent reply', async () => {
    const m = await say(h, { channel: W.general, text: `${botMention(h)} ping everyone` });
    const post = await h.slack.waitForCall('chat.postMessage', (c) => c.params.thread_ts === m.ts && (c.params.text ?? '').includes(CANARY));
    expect(post.pings).toEqual([]);
    expect(post.params.text).toContain('&lt;!channel&gt;');
    expect(post.params.text).toContain('&lt;@U0123ABC&gt;');
    expect(post.params.text).toContain('@\u200Bhere');
    expect(post.params.link_names).toBe('false');
    // No call the bot made in this test pinged anyone.
    expect(h.slack.calls.flatMap((c) => c.pings)).toEqual([]);
  });

  it('waits out a ratelimited chat.postMessage and posts once', async () => {
    h.slack.fail('chat.postMessage', { error: 'ratelimited', retryAfterSeconds: 1 });
    const m = await say(h, { channel: W.general, text: `${botMention(h)} rate limited please` });
    const ok = await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.thread_ts === m.ts, 15_000);
    const attempts = h.slack.callsOf('chat.postMessage', (c) => c.params.thread_ts === m.ts);
    expect(attempts.map((c) => c.status)).toEqual([429, 200]);
    // Retry-After was honoured: no hot loop.
    expect(ok.at - attempts[0]!.at).toBeGreaterThanOrEqual(900);
    expect(postsIn(h, W.general, m.ts)).toHaveLength(1);
    expect(chatCalls(h).filter((c) => (c.json as { message?: string }).message === 'rate limited please')).toHaveLength(1);
    // A 429 stored nothing: the retry posts without reading the thread back first.
    expect(h.slack.callsOf('conversations.replies', (c) => c.params.ts === m.ts)).toEqual([]);
  });

  it('retries a 5xx from chat.postMessage and posts once', async () => {
    h.slack.fail('chat.postMessage', { error: 'http_503' });
    const m = await say(h, { channel: W.general, text: `${botMention(h)} server trouble` });
    await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.thread_ts === m.ts, 15_000);
    expect(h.slack.callsOf('chat.postMessage', (c) => c.params.thread_ts === m.ts).map((c) => c.status)).toEqual([503, 200]);
    expect(chatCalls(h).filter((c) => (c.json as { message?: string }).message === 'server trouble')).toHaveLength(1);
  });

  it('gives up on not_in_channel with a log line that says why', async () => {
    const m = await say(h, { channel: 'C0NOTIN01', text: `${botMention(h)} are you in here?` });
    const line = await until(() => logLines(h, /Slack refused the reply/).find((l) => l.channel === 'C0NOTIN01'), 'refusal logged');
    expect(line.code).toBe('not_in_channel');
    expect(String(line.msg)).toMatch(/invite/);
    await until(() => h.slack.reactionsOn('C0NOTIN01', m.ts).includes('warning'), 'warning reaction');
    // Given up: no retry loop on chat.postMessage (the reply once; at most one error notice).
    expect(h.slack.callsOf('chat.postMessage', (c) => c.params.channel === 'C0NOTIN01').length).toBeLessThanOrEqual(2);
    // `/agent why` blames Slack's refusal, not the agent service (which answered).
    const ack = await h.to.command({ text: 'why', user: W.admin, channel: 'C0NOTIN01' });
    const why = await h.slack.waitForCall('response_url', (c) => c.response.id === ack.responseUrlId);
    const text = `${why.params.text ?? ''} ${why.params.blocks ?? ''}`;
    expect(text).toContain('the chat platform refused to post the reply');
    expect(text).not.toContain('the agent service refused');
  });

  it('on an agent failure adds :warning: and explains in the thread', async () => {
    h.agent.failNext(1, { status: 400, body: { error: 'bad request' } }, { endpoint: 'chat' });
    const m = await say(h, { channel: W.general, text: `${botMention(h)} this will fail` });
    await until(() => h.slack.reactionsOn(W.general, m.ts).includes('warning'), 'warning reaction');
    const notice = await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.thread_ts === m.ts);
    expect(notice.params.text).toBeTruthy();
    expect(h.slack.reactionsOn(W.general, m.ts)).toEqual(['warning']);
  });

  it('sends the thread so far with a follow-up when the channel has context: thread', async () => {
    const channel = 'C0CONTEXT';
    for (const text of ['bind demo-helper', 'set context thread']) {
      const ack = await h.to.command({ text, user: W.admin, channel });
      await h.slack.waitForCall('response_url', (c) => c.response.id === ack.responseUrlId);
    }
    const root = await say(h, { channel, text: `${botMention(h)} what is 2+2?` });
    await h.slack.waitForCall('chat.postMessage', (c) => c.params.thread_ts === root.ts && c.response.ok === true);
    await say(h, { channel, text: 'and times 3?', threadTs: root.ts });
    const call = await h.agent.waitForCalls(1, (c) => c.endpoint === 'chat' && String((c.json as { message?: string }).message).includes('and times 3?'));
    const sent = (call[0]!.json as { message: string }).message;
    expect(sent).toContain('Earlier messages in this thread:');
    expect(sent).toContain('Uma User: what is 2+2?');
    expect(sent).toMatch(/\(bot\): echo: what is 2\+2\?/);
  });
});
