import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, chatCalls, logLines, postsIn, say, startSlackBridge, until, W, type SlackHarness } from './harness.js';
import { HeldCalls } from '../support/held-calls.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Agent calls whose message holds `HOLD` wait until released (one gate per test). */
const held = new HeldCalls();
const release = () => held.release();
const holdCalls = () => held.hold();

/**
 * Someone edits a question while it waits behind a slow one of the same conversation (a
 * password pasted by mistake, taken out again). Slack sends `message_changed`. Until its agent
 * call starts, the agent gets the edited text, or nothing when the edit no longer asks the bot;
 * once the call started, the edit changes nothing and nothing is asked twice.
 */
describe('Slack: a question edited before it is answered', () => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({
      mode: 'http',
      env: { MAX_MESSAGE_CHARS: '200' },
      agent: {
        reply: held.reply,
      },
    });
  });
  afterAll(async () => {
    release();
    await h?.close();
  });

  const calledWith = (text: string) => chatCalls(h).filter((c) => (c.json as { message?: string }).message?.includes(text));
  const heldQuestion = async (o: { channel: string; text: string; threadTs?: string }) => {
    holdCalls();
    const m = await say(h, o);
    await until(() => calledWith(o.text.replace(botMention(h), '').trim()).length === 1, 'first call under way');
    return m;
  };

  it('in a DM: the secret edited out of a waiting question never reaches the agent, nor the log', async () => {
    await heldQuestion({ channel: W.dm, text: 'HOLD first, slow one' });
    const secret = await say(h, { channel: W.dm, text: 'can you log in with password hunter2?' });
    await h.to.event(h.slack.editMessage(W.dm, secret.ts, 'can you log in with password [removed]?'));
    await until(() => logLines(h, /was edited: the agent will be asked the edited text/).length === 1, 'edit applied');
    release();
    await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.text === 'echo: can you log in with password [removed]?', 15_000);
    // Before: the agent was asked (and billed for) the original, secret included.
    expect(calledWith('hunter2')).toEqual([]);
    expect(calledWith('[removed]')).toHaveLength(1);
    expect(postsIn(h, W.dm, undefined).map((c) => c.params.text)).toEqual(['echo: HOLD first, slow one', 'echo: can you log in with password [removed]?']);
    expect(h.logs.text).not.toContain('hunter2');
  });

  it('in a thread: a follow-up whose mention is edited out while it waits is not asked', async () => {
    const root = await heldQuestion({ channel: W.general, text: `${botMention(h)} HOLD slow question` });
    const follow = await say(h, { channel: W.general, text: `${botMention(h)} and my token xoxp-oops`, threadTs: root.ts });
    await h.to.event(h.slack.editMessage(W.general, follow.ts, 'never mind, and my token is gone'));
    await until(() => logLines(h, /no longer addressed to the bot/).length === 1, 'withdrawal logged');
    release();
    await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.text === 'echo: HOLD slow question', 15_000);
    const after = await say(h, { channel: W.general, text: `${botMention(h)} next one`, threadTs: root.ts });
    await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.text === 'echo: next one', 15_000);
    expect(calledWith('xoxp-oops')).toEqual([]);
    expect(calledWith('token is gone')).toEqual([]);
    expect(postsIn(h, W.general, root.ts).map((c) => c.params.text)).toEqual(['echo: HOLD slow question', 'echo: next one']);
    expect(after.ts > follow.ts).toBe(true);
  });

  it('an edit after the call started, or adding a mention to chatter, asks nothing more', async () => {
    const running = await heldQuestion({ channel: W.general, text: `${botMention(h)} HOLD running question` });
    await h.to.event(h.slack.editMessage(W.general, running.ts, `${botMention(h)} HOLD running question, edited`));
    await until(() => logLines(h, /edited after its agent call started/).length === 1, 'edit refused');
    const chatter = await say(h, { channel: W.general, text: 'just chatting' });
    await h.to.event(h.slack.editMessage(W.general, chatter.ts, `${botMention(h)} just chatting`));
    release();
    await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.text === 'echo: HOLD running question', 15_000);
    await sleep(300);
    expect(calledWith('running question')).toHaveLength(1);
    expect(calledWith('just chatting')).toEqual([]);
    expect(postsIn(h, W.general, chatter.ts)).toEqual([]);
  });

  it('edited too long, or left empty, while it waits: withdrawn, and told why only when too long', async () => {
    await heldQuestion({ channel: W.dm, text: 'HOLD another slow one' });
    const long = await say(h, { channel: W.dm, text: 'short at first' });
    const emptied = await say(h, { channel: W.dm, text: 'soon nothing' });
    await h.to.event(h.slack.editMessage(W.dm, long.ts, `now long ${'x'.repeat(300)}`));
    await h.to.event(h.slack.editMessage(W.dm, emptied.ts, ' '));
    await until(() => logLines(h, /a waiting message was edited \((too long|left empty)\)/).length === 2, 'both withdrawn');
    release();
    const notice = await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && String(c.params.text).includes('the limit is 200'), 15_000);
    await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.text === 'echo: HOLD another slow one', 15_000);
    await sleep(300);
    expect(notice.params.text).toContain('309 characters');
    expect(calledWith('short at first')).toEqual([]);
    expect(calledWith('now long')).toEqual([]);
    expect(calledWith('soon nothing')).toEqual([]);
  });
});
