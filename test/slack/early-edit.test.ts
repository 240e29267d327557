import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeConversationId } from '../../src/core/conversation.js';
import { EARLY_CHANGE_SECONDS } from '../../src/queue/early-change.js';
import { HeldCalls } from '../support/held-calls.js';
import { jobIdFor } from '../../src/queue/types.js';
import { botMention, chatCalls, logLines, postsIn, say, startSlackBridge, until, W, type SlackHarness } from './harness.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Slack delivers events in no order: the edit (or deletion) of a question sent a moment ago can
 * be handled before the question itself is stored (two HTTP requests at once, a first delivery
 * that failed and is retried after the edit). A password pasted by mistake and edited out within
 * a second must not reach the agent anyway, nor be billed.
 */
describe('Slack: an edit or deletion delivered before its message', () => {
  let h: SlackHarness;
  /** Agent calls whose message holds `HOLD` wait until released. */
  const held = new HeldCalls();
  beforeAll(async () => {
    h = await startSlackBridge({ mode: 'http', agent: { reply: held.reply } });
  });
  afterAll(async () => {
    held.release();
    await h?.close();
  });

  const calledWith = (text: string) => chatCalls(h).filter((c) => (c.json as { message?: string }).message?.includes(text));
  /** The message as the emulator stores it, its events not delivered yet. */
  const written = (o: { channel: string; text: string; threadTs?: string }) => h.slack.userMessage({ channel: o.channel, user: W.user, text: o.text, threadTs: o.threadTs });
  /** Its events: `app_mention` too when it mentions the bot outside a DM, as Slack sends them. */
  const deliver = async (m: ReturnType<typeof written>) => {
    if (m.message.channel_type !== 'im' && String(m.message.text).includes(botMention(h))) await h.to.event(m.mention);
    await h.to.event(m.message);
  };
  const answered = (text: string) => h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.text === `echo: ${text}`, 15_000);
  /**
   * Waits for the edit or deletion to be handled (Bolt acks before its listener runs). Code that
   * loses it says nothing: then go on after a while, and let the assertions say what came out.
   */
  const handled = (log: RegExp, count = 1) => until(() => logLines(h, log).length >= count, 'the change handled', 3_000).catch(() => undefined);
  /** The kept changes of messages (of the one sent at `ts`). */
  const earlyKeys = (ts = '*') => h.bridge.redis.keys(`${h.bridge.queue.mailbox.keys.base}:conv:*:early:*${ts}`);

  it('in a DM: the edit comes first, the agent is asked the edited text once, and the secret is never sent', async () => {
    const m = written({ channel: W.dm, text: 'log in with password hunter2' });
    await h.to.event(h.slack.editMessage(W.dm, m.ts, 'log in with password [removed]'));
    await handled(/edited before it was stored: the agent will be asked the edited text/);
    await deliver(m);
    // Its answer, whichever text the agent got.
    await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && String(c.params.text).startsWith('echo: log in with password'), 15_000);
    await sleep(300);
    expect(calledWith('[removed]')).toHaveLength(1);
    expect(calledWith('hunter2')).toEqual([]);
    expect(postsIn(h, W.dm, undefined).map((c) => c.params.text)).toEqual(['echo: log in with password [removed]']);
    expect(h.logs.text).not.toContain('hunter2');
    // Of the edit kept, only its order is left (an older edit arriving late changes nothing).
    const [key] = await earlyKeys(m.ts);
    expect(Object.keys(await h.bridge.redis.hgetall(key!))).toEqual(['at']);
  });

  it('two edits, the newer delivered first and the older after the message is stored: the newer one stands', async () => {
    held.hold();
    await deliver(written({ channel: W.dm, text: 'HOLD a slow question first' }));
    await until(() => calledWith('HOLD a slow question first').length === 1, 'first call under way');
    const m = written({ channel: W.dm, text: 'code word hunter3' });
    const older = h.slack.editMessage(W.dm, m.ts, 'code word [removed once]');
    const newer = h.slack.editMessage(W.dm, m.ts, 'code word [removed]');
    const kept = logLines(h, /edited before it was stored/).length;
    await h.to.event(newer);
    await handled(/edited before it was stored/, kept + 1);
    await deliver(m);
    const conversationId = encodeConversationId({ platform: 'slack', workspaceId: h.slack.identity.teamId, channelId: W.dm });
    await until(() => h.bridge.queue.stored(conversationId, `${W.dm}:${m.ts}`), 'the message stored');
    await h.to.event(older);
    await handled(/an edit arrived after a newer one/);
    held.release();
    await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && String(c.params.text).startsWith('echo: code word'), 15_000);
    await sleep(300);
    expect(calledWith('code word')).toHaveLength(1);
    expect(calledWith('code word [removed]')).toHaveLength(1);
    expect(calledWith('removed once')).toEqual([]);
    expect(calledWith('hunter3')).toEqual([]);
  });

  it('in a channel: the mention edited out before the question is stored: the agent is never called', async () => {
    const m = written({ channel: W.general, text: `${botMention(h)} my token is xoxp-oops` });
    await h.to.event(h.slack.editMessage(W.general, m.ts, 'never mind'));
    await handled(/edited \(no longer addressed to the bot\) before it was stored/);
    await deliver(m);
    const control = await say(h, { channel: W.general, text: `${botMention(h)} a later question` });
    await answered('a later question');
    await sleep(300);
    expect(calledWith('xoxp-oops')).toEqual([]);
    expect(calledWith('never mind')).toEqual([]);
    expect(postsIn(h, W.general, m.ts)).toEqual([]);
    expect(h.slack.callsOf('reactions.add', (c) => c.params.timestamp === m.ts)).toEqual([]);
    expect(control.ts > m.ts).toBe(true);
  });

  it('in a channel that answers every message: a message without a mention, emptied before it is stored, is not asked', async () => {
    await h.bridge.bindings.set('slack', W.free, { instanceId: 'demo-helper', mode: 'all', errorPolicy: 'reply', context: 'off', source: 'admin' });
    const m = written({ channel: W.free, text: 'here is my api key sk-live-123' });
    const kept = logLines(h, /edited \(left empty\) before it was stored/).length;
    await h.to.event(h.slack.editMessage(W.free, m.ts, ' '));
    await handled(/edited \(left empty\) before it was stored/, kept + 1);
    await deliver(m);
    await say(h, { channel: W.free, text: 'a later one' });
    await answered('a later one');
    await sleep(300);
    expect(calledWith('sk-live-123')).toEqual([]);
    expect(postsIn(h, W.free, m.ts)).toEqual([]);
  });

  it('deleted before it is stored: the agent is never called, and a redelivery stores nothing either', async () => {
    const m = written({ channel: W.dm, text: 'my card number is 4111 1111' });
    const deletion = h.slack.deleteMessage(W.dm, m.ts);
    await h.to.event(deletion);
    await handled(/deleted before it was stored/);
    await deliver(m);
    // Slack retries a delivery it thinks failed: the same message again.
    await deliver(m);
    await say(h, { channel: W.dm, text: 'next question' });
    await answered('next question');
    await sleep(300);
    expect(calledWith('4111')).toEqual([]);
    expect(postsIn(h, W.dm, undefined).filter((c) => String(c.params.text).includes('4111'))).toEqual([]);
  });

  it('an edit of a message that never comes leaves one record, which expires', async () => {
    const m = written({ channel: W.dm, text: 'sent, but its event never arrives' });
    const before = logLines(h, /edited before it was stored/).length;
    await h.to.event(h.slack.editMessage(W.dm, m.ts, 'edited, never stored'));
    await handled(/edited before it was stored/, before + 1);
    const keys = await earlyKeys(m.ts);
    expect(keys).toHaveLength(1);
    const ttl = await h.bridge.redis.ttl(keys[0]!);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(EARLY_CHANGE_SECONDS);
    // Nothing else: no mailbox, no record, no job for it.
    const conversation = keys[0]!.slice(0, keys[0]!.indexOf(':early:'));
    expect((await h.bridge.redis.keys(`${conversation}:*`)).filter((k) => !k.includes(':early:'))).toEqual([]);
    expect(Object.keys(await h.bridge.redis.hgetall(keys[0]!)).sort()).toEqual(['at', 'mark', 'text']);
    expect(await h.bridge.queue.queue.getJob(jobIdFor('slack', `${W.dm}:${m.ts}`))).toBeUndefined();
  });

  it('an edit of chatter that never asked the bot keeps nothing, and asks nothing', async () => {
    const m = written({ channel: W.general, text: 'just chatting' });
    await h.to.event(h.slack.editMessage(W.general, m.ts, 'just chatting, edited'));
    await deliver(m);
    const control = await say(h, { channel: W.general, text: `${botMention(h)} after the chatter` });
    await answered('after the chatter');
    expect(await earlyKeys(m.ts)).toEqual([]);
    expect(calledWith('just chatting')).toEqual([]);
    expect(control.ts > m.ts).toBe(true);
  });
});

/** Socket Mode hands envelopes to Bolt concurrently too: the same edit, first, over the socket. */
describe('Slack (Socket Mode): an edit delivered before its message', () => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({ mode: 'socket', agent: { reply: async (_id, message) => `echo: ${message}` } });
  });
  afterAll(async () => h?.close());

  it('the agent is asked the edited text once', async () => {
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} use key sk-live-oops` });
    await h.to.event(h.slack.editMessage(W.general, m.ts, `${botMention(h)} use the key I set`));
    await until(() => logLines(h, /edited before it was stored/).length === 1, 'edit handled', 3_000).catch(() => undefined);
    await h.to.event(m.mention);
    await h.to.event(m.message);
    await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && String(c.params.text).startsWith('echo: use'), 15_000);
    await sleep(300);
    const calls = chatCalls(h).map((c) => (c.json as { message?: string }).message);
    expect(calls).toEqual(['use the key I set']);
  });
});
