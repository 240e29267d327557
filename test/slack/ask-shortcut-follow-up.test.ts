import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, chatCalls, logLines, postsIn, say, startSlackBridge, until, W, type SlackHarness } from './harness.js';

/**
 * "Ask the agent" on one message of other people's thread answers that message; it does not make
 * the bot a participant in the thread (no follow-up mark), so the people's later replies there
 * (no mention) are not sent to the agent. A thread where someone mentioned the bot still takes
 * follow-ups without a mention (THREAD_FOLLOW_UP_DAYS).
 */
let h: SlackHarness;
beforeAll(async () => {
  h = await startSlackBridge({ mode: 'http' });
});
afterAll(async () => {
  await h?.close();
});

const messageOf = (c: { json?: unknown }) => String((c.json as { message?: string }).message);
const agentGot = (text: string) => chatCalls(h).some((c) => messageOf(c).includes(text));
const droppedAs = (ts: string, reason: string) =>
  until(() => logLines(h, /message dropped/).find((l) => l.messageId === `${W.general}:${ts}` && l.reason === reason), `${ts} dropped as ${reason}`);

describe('"Ask the agent" in a thread (Slack)', () => {
  it("answers the asked message only: the thread's later unmentioned replies are not sent to the agent", async () => {
    const parent = await say(h, { channel: W.general, user: W.admin, text: 'Release notes draft for 4.2 is up, comments please' });
    const asked = await say(h, { channel: W.general, user: W.user, text: 'Is the migration step reversible?', threadTs: parent.ts });
    await h.to.interaction(h.slack.messageShortcut({ user: W.user, channel: W.general, messageTs: asked.ts, callbackId: 'ask_agent' }));
    await until(() => agentGot('Is the migration step reversible?'), 'the asked message sent to the agent');
    await until(() => postsIn(h, W.general, parent.ts).length > 0, 'the answer in the thread');

    const later = [];
    for (const [user, text] of [[W.admin, 'Yes, there is a down migration'], [W.user, 'ok thanks, approving'], [W.admin, 'merged']] as const) {
      later.push(await say(h, { channel: W.general, user, text, threadTs: parent.ts }));
    }
    for (const m of later) await droppedAs(m.ts, 'not_addressed');
    expect(chatCalls(h).filter((c) => /down migration|approving|merged/.test(messageOf(c)))).toEqual([]);
    expect(postsIn(h, W.general, parent.ts)).toHaveLength(1);
  });

  it('still takes follow-ups without a mention in a thread where the bot was mentioned', async () => {
    const parent = await say(h, { channel: W.general, user: W.admin, text: `${botMention(h)} what changed in 4.2?` });
    await until(() => postsIn(h, W.general, parent.ts).length > 0, 'the answer to the mention');
    await say(h, { channel: W.general, user: W.admin, text: 'and in 4.3?', threadTs: parent.ts });
    await until(() => agentGot('and in 4.3?'), 'the follow-up sent to the agent');
    await until(() => postsIn(h, W.general, parent.ts).length === 2, 'the follow-up answered');
  });
});
