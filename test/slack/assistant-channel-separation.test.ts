import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, say, startSlackBridge, W, type SlackHarness } from './harness.js';

/**
 * An assistant thread is answered by the instance of the channel the user is looking at (its
 * context channel), but it is the user's private chat: it must not spend that channel's quota,
 * nor show up in that channel's `/agent why` (audit A, R9). Quotas and diagnostics are the DM's
 * own, as for a message typed in a DM with the bot. "Ask the agent" on a message in the thread
 * is answered as a message typed there: by the context channel's instance, with the status line (R14).
 */
describe('assistant threads and the channel they are viewed from', () => {
  /** Bound to demo-helper; the workspace's DMs are bound to demo-helper too (BINDINGS `dm`). */
  const CHANNEL = 'C0VIEWED1';
  /** Bound to demo-poet. */
  const POET = 'C0VIEWED2';
  const ADMIN_DM = 'D0ADMIN09';
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({
      mode: 'http',
      env: { BINDINGS: `slack:${CHANNEL}=demo-helper,slack:${POET}=demo-poet,slack:dm=demo-helper` },
      agent: { reply: (id, m) => `${id} says: ${m}` },
    });
  });
  afterAll(async () => h?.close());

  /** `/agent <text>` by the admin in `channel`; resolves with the answer's text. */
  async function agent(text: string, channel: string) {
    const ack = await h.to.command({ text, user: W.admin, channel });
    const call = await h.slack.waitForCall('response_url', (c) => c.response.id === ack.responseUrlId, 20_000);
    return `${call.params.text ?? ''} ${call.params.blocks ?? ''}`;
  }

  /** Opens an assistant thread in `dm` while the user looks at `contextChannel`. */
  async function openThread(dm: string, contextChannel: string) {
    const started = h.slack.assistantThreadStarted({ user: W.user, dm, contextChannel });
    await h.to.event(started.event);
    // The thread is remembered once its prompts are set; a message before that is a plain DM.
    await h.slack.waitForCall('assistant.threads.setSuggestedPrompts', (c) => c.params.thread_ts === started.threadTs, 20_000);
    return started.threadTs;
  }
  /** The bot's next post in `channel`'s thread `threadTs` whose text matches. */
  const postIn = (channel: string, threadTs: string, text: RegExp) =>
    h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.channel === channel && c.params.thread_ts === threadTs && text.test(c.params.text ?? ''), 20_000);

  it("spends the DM's quota, not the viewed channel's, and its refusals are in the DM's `/agent why`, not the channel's", async () => {
    expect(await agent('set quota channel-per-minute 1', CHANNEL)).toMatch(/channel-per-minute/);
    expect(await agent('set quota channel-per-minute 1', ADMIN_DM)).toMatch(/channel-per-minute/);

    const dm = 'D0VIEWER1';
    const threadTs = await openThread(dm, CHANNEL);
    await h.to.event(h.slack.assistantMessage({ user: W.user, dm, threadTs, text: 'private question one' }).message);
    expect((await postIn(dm, threadTs, /private question one/)).params.text).toMatch(/^demo-helper says:/);
    await h.to.event(h.slack.assistantMessage({ user: W.user, dm, threadTs, text: 'private question two' }).message);
    // Refused by the DMs' own limit, and told so in the words of a DM.
    const refused = await postIn(dm, threadTs, /reached the limit/);
    expect.soft(refused.params.text).toMatch(/the limit of 1 message per minute for direct messages/);
    expect.soft(refused.params.text).not.toMatch(/in this channel/);

    const whyHere = await agent('why', CHANNEL);
    expect.soft(whyHere).not.toContain(W.user);
    expect.soft(whyHere).toMatch(/No unanswered messages/);
    // The channel's own quota is untouched: its first message of the minute is answered.
    const asked = await say(h, { channel: CHANNEL, user: W.admin, text: `${botMention(h)} status of the release?` });
    expect((await postIn(CHANNEL, asked.ts, /status of the release/)).params.text).toMatch(/^demo-helper says:/);

    expect(await agent('why', ADMIN_DM)).toMatch(new RegExp(`${W.user}[^\\n]*quota`));
    for (const where of [CHANNEL, ADMIN_DM]) expect(await agent('set quota channel-per-minute default', where)).toMatch(/channel-per-minute/);
  }, 60_000);

  it("answers \"Ask the agent\" on a message in the thread with the context channel's instance, in the thread, with the status line", async () => {
    const dm = 'D0VIEWER2';
    const threadTs = await openThread(dm, POET);
    const typed = h.slack.assistantMessage({ user: W.user, dm, threadTs, text: 'a poem about autumn' });
    await h.to.event(typed.message);
    expect((await postIn(dm, threadTs, /a poem about autumn/)).params.text).toMatch(/^demo-poet says:/);
    const statusesBefore = h.slack.callsOf('assistant.threads.setStatus', (c) => c.params.thread_ts === threadTs && c.params.status !== '').length;

    await h.to.interaction(h.slack.messageShortcut({ user: W.user, channel: dm, messageTs: typed.ts, callbackId: 'ask_agent' }));
    const answer = await postIn(dm, threadTs, /Message from Uma User/);
    expect.soft(answer.params.text).toMatch(/^demo-poet says:/);
    const asked = h.agent.chatCalls().filter((c) => c.message.includes('Message from Uma User') && c.message.includes('a poem about autumn'));
    expect.soft(asked.map((c) => c.instanceId)).toEqual(['demo-poet']);
    // The status line, as for a message typed in the thread, not a reaction.
    expect.soft(h.slack.callsOf('assistant.threads.setStatus', (c) => c.params.thread_ts === threadTs && c.params.status !== '')).toHaveLength(statusesBefore + 1);
    expect.soft(h.slack.callsOf('reactions.add', (c) => c.params.channel === dm)).toEqual([]);
  }, 60_000);
});
