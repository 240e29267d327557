import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, chatCalls, logLines, postsIn, say, startSlackBridge, until, W, type SlackHarness } from './harness.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Someone deletes a question before it is answered (sent by mistake, a secret pasted into it):
 * the agent is not asked it and nothing is posted under it. Slack sends `message_deleted`.
 */
describe('Slack: a question deleted before it is answered', () => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({
      mode: 'http',
      agent: {
        reply: async (_id, message) => {
          if (message.includes('slow')) await sleep(1_500);
          return `echo: ${message}`;
        },
      },
    });
  });
  afterAll(async () => h?.close());

  const calledWith = (text: string) => chatCalls(h).filter((c) => (c.json as { message?: string }).message?.includes(text));

  it('in a DM: the message queued behind another is deleted, and never reaches the agent', async () => {
    await say(h, { channel: W.dm, text: 'first, slow one' });
    await until(() => calledWith('first, slow one').length === 1, 'first call under way');
    const secret = await say(h, { channel: W.dm, text: 'my password is hunter2' });
    await h.to.event(h.slack.deleteMessage(W.dm, secret.ts));
    const after = await say(h, { channel: W.dm, text: 'third one' });
    await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.text === 'echo: third one', 15_000);
    expect(calledWith('hunter2')).toEqual([]);
    const posts = postsIn(h, W.dm, undefined).map((c) => c.params.text);
    expect(posts).toEqual(['echo: first, slow one', 'echo: third one']);
    expect(h.slack.callsOf('reactions.add', (c) => c.params.timestamp === secret.ts)).toEqual([]);
    expect(after.ts > secret.ts).toBe(true);
    expect(logLines(h, /deleted before it was answered: the agent will not be asked/)).toHaveLength(1);
  });

  it('in a thread: a follow-up deleted while the question before it is answered is not asked', async () => {
    const root = await say(h, { channel: W.general, text: `${botMention(h)} slow question` });
    await until(() => calledWith('slow question').length === 1, 'first call under way');
    const reply = await say(h, { channel: W.general, text: `${botMention(h)} also my token xoxp-oops`, threadTs: root.ts });
    await h.to.event(h.slack.deleteMessage(W.general, reply.ts));
    await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.text === 'echo: slow question', 15_000);
    await sleep(500);
    expect(calledWith('xoxp-oops')).toEqual([]);
    expect(postsIn(h, W.general, root.ts).map((c) => c.params.text)).toEqual(['echo: slow question']);
    expect(h.slack.callsOf('reactions.add', (c) => c.params.timestamp === reply.ts)).toEqual([]);
  });

  it('a message deleted after it was answered, or never addressed to the bot, changes nothing', async () => {
    const m = await say(h, { channel: W.general, text: `${botMention(h)} quick one` });
    await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.text === 'echo: quick one', 15_000);
    await h.to.event(h.slack.deleteMessage(W.general, m.ts));
    const chatter = await say(h, { channel: W.general, text: 'just chatting' });
    await h.to.event(h.slack.deleteMessage(W.general, chatter.ts));
    await sleep(300);
    expect(postsIn(h, W.general, m.ts)).toHaveLength(1);
    expect(logLines(h, /could not withdraw/)).toEqual([]);
  });
});
