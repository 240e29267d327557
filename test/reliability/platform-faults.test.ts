import { afterEach, describe, expect, it } from 'vitest';
import { closeAfterEach } from '../support/close-after-each.js';
import { startPipeline, webMessage } from '../support/pipeline.js';
import { botMention, say, startSlackBridge, W } from '../slack/harness.js';
import { sleep, watchProcessErrors } from './support/guards.js';
import { startDiscordBridge } from '../discord/harness.js';
import { figures, Ledger } from './support/ledger.js';

/**
 * The chat platform refusing replies: 429 with Retry-After and 5xx bursts on posting. Each
 * reply is retried and posted exactly once, the agent is asked once per message (the answer is
 * kept between attempts), and order holds within each conversation.
 */
const guard = watchProcessErrors();
afterEach(() => expect(guard.errors).toEqual([]));
// Registered after the guard's hook, so it runs first: everything is closed before the check.
const closing = closeAfterEach();

describe('platform faults on posting a reply', () => {
  it('core: bursts of 429 and 5xx from the platform over 40 messages in 8 conversations', async () => {
    const pl = closing(await startPipeline({ JOB_ATTEMPTS: '8', RETRY_BASE_DELAY_MS: '30', LOG_LEVEL: 'warn' }));
    const ledger = new Ledger();
    pl.sink.fail({ status: 502 }, { status: 503 }, { status: 500 }, { status: 429, retryAfter: 1 }, { status: 429, retryAfter: 1 }, { status: 502 });
    const messages = [];
    for (let i = 0; i < 5; i++) {
      for (let c = 0; c < 8; c++) {
        const m = webMessage(`p${c}-${i}`, { channelId: `plat${c}`, isDirect: true });
        ledger.send(`plat${c}`, m.messageId);
        messages.push(m);
      }
    }
    for (const m of messages) await pl.bridge.ingress.handle(m);
    // A second burst while replies are flowing.
    await pl.sink.waitFor((posts) => posts.length >= 10, 15_000);
    pl.sink.fail({ status: 429, retryAfter: 1 }, { status: 500 }, { status: 503 });
    await pl.sink.waitFor((posts) => new Set(posts.map((x) => x.messageId)).size >= messages.length, 30_000);
    await sleep(1_200);
    const result = ledger.evaluate(pl.sink.posts.filter((x) => x.kind === 'chunk').map((x) => x.messageId));
    figures('platform-sink', { faults: 9, agentCalls: pl.agent.chatCalls().length, notices: pl.sink.posts.filter((x) => x.kind === 'notice').length, ...result });
    expect(result).toMatchObject({ lost: 0, duplicated: 0, outOfOrder: 0 });
    expect(pl.sink.posts.filter((x) => x.kind === 'notice')).toEqual([]);
    expect(pl.agent.chatCalls()).toHaveLength(messages.length);
  }, 60_000);

  it('Slack: ratelimited (429 + Retry-After), HTTP 5xx and internal_error on chat.postMessage: each reply posted once', async () => {
    const h = closing(await startSlackBridge({ mode: 'http', agent: { reply: (_id, m) => `echo: ${m}` }, env: { JOB_ATTEMPTS: '8', LOG_LEVEL: 'warn' } }));
    h.slack.fail('chat.postMessage', { error: 'ratelimited', retryAfterSeconds: 1, times: 2 });
    h.slack.fail('chat.postMessage', { error: 'http_503', times: 2 });
    h.slack.fail('chat.postMessage', { error: 'internal_error' });
    h.slack.fail('chat.postMessage', { error: 'http_500' });
    const asked = [];
    for (let i = 0; i < 12; i++) asked.push(await say(h, { channel: W.general, text: `${botMention(h)} slack fault ${i}` }));
    const replies = (ts: string) => h.slack.posted((c) => c.params.thread_ts === ts && (c.params.text ?? '').startsWith('echo:'));
    await h.slack.waitForCalls('chat.postMessage', (c) => c.response.ok === true, asked.length, 30_000);
    await sleep(1_500);
    const failed = h.slack.callsOf('chat.postMessage', (c) => c.response.ok !== true);
    figures('platform-slack', { messages: asked.length, refusedPosts: failed.length, okPosts: h.slack.posted().length, agentCalls: h.agent.chatCalls().length });
    expect(failed.length).toBe(6);
    for (const m of asked) expect(replies(m.ts)).toHaveLength(1);
    expect(h.agent.chatCalls()).toHaveLength(asked.length);
    // The rate-limited post waited its Retry-After before trying again.
    const limited = h.slack.callsOf('chat.postMessage', (c) => c.status === 429);
    const retried = h.slack.callsOf('chat.postMessage', (c) => c.params.thread_ts === limited[0]!.params.thread_ts);
    expect(retried.at(-1)!.at - limited[0]!.at).toBeGreaterThanOrEqual(950);
  }, 60_000);

  it('Discord: 429 with rate-limit headers and 5xx on message create: each reply posted once', async () => {
    const d = closing(await startDiscordBridge({ agent: { reply: (_id, m) => `echo: ${m}` }, env: { LOG_LEVEL: 'warn' } }));
    const w = d.discord.world;
    d.discord.failNextMessageCreates(3, { status: 429, retryAfterSeconds: 0.3 });
    d.discord.failNextMessageCreates(2, { status: 502 });
    d.discord.failNextMessageCreates(1, { status: 503 });
    const sent: ReturnType<typeof d.discord.sendMessage>[] = [];
    for (let i = 0; i < 12; i++) sent.push(d.discord.sendMessage({ author: w.users.alice, channel: w.channels.general, content: `<@${w.bot.id}> discord fault ${i}` }));
    await d.discord.waitFor(() => sent.every((m) => d.discord.repliesTo(m.id).length > 0), 'every message answered', 30_000);
    await sleep(1_000);
    const creates = d.discord.calls.filter((c) => c.method === 'POST' && /^\/channels\/\d+\/messages$/.test(c.path));
    const ledger = new Ledger();
    for (const m of sent) ledger.send('general', m.id);
    const answered = d.discord.botMessages(w.channels.general.id).map((m) => m.message_reference?.message_id as string).filter(Boolean);
    const result = ledger.evaluate(answered);
    figures('platform-discord', { ...result, messages: sent.length, refusedCreates: creates.filter((c) => c.status !== 200).length, creates: creates.length, agentCalls: d.agent.chatCalls().length });
    expect(creates.filter((c) => c.status !== 200)).toHaveLength(6);
    expect(result).toMatchObject({ lost: 0, duplicated: 0, outOfOrder: 0 });
    expect(d.agent.chatCalls()).toHaveLength(sent.length);
  }, 60_000);
});
