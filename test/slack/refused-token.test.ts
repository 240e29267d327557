import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, chatCalls, logLines, say, startSlackBridge, until, W, type SlackHarness } from './harness.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ROOM = 'C0ROOM001';

/**
 * Slack refuses the bot's token while the bridge runs (revoked, app uninstalled, bot user
 * deactivated). The first answer is billed and lost; the messages after it must not be billed
 * for answers that cannot be posted, until the token works again.
 */
describe('Slack: the bot token or a channel refused mid-flight', () => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({
      mode: 'http',
      agent: { reply: (_id, message) => `echo: ${message}` },
      replyPort: { tokenRecheckMs: 1_000 },
      env: { BINDINGS: `slack:${W.general}=demo-helper,slack:${ROOM}=demo-helper` },
    });
  });
  afterAll(async () => h?.close());

  const calledWith = (text: string) => chatCalls(h).filter((c) => (c.json as { message?: string }).message === text);
  const gaveUp = (text: string) => logLines(h, /gave up on a message/).filter((l) => String(l.messageId).endsWith(text));

  it('gives up on the message, then asks the agent nothing while the token stays refused, and answers again once it works', async () => {
    // The reply and the notice after it: token_revoked.
    h.slack.fail('chat.postMessage', { error: 'token_revoked', times: 2 });
    const first = await say(h, { channel: W.general, text: `${botMention(h)} first` });
    await until(() => gaveUp(first.ts).length === 1, 'first given up');
    expect(calledWith('first')).toHaveLength(1);
    const line = gaveUp(first.ts)[0]!;
    expect(JSON.stringify(line)).toMatch(/token_revoked/);
    expect(JSON.stringify(line)).not.toContain(h.slack.identity.botToken);

    // Within the recheck window: given up before the call.
    const second = await say(h, { channel: W.general, text: `${botMention(h)} second` });
    await until(() => gaveUp(second.ts).length === 1, 'second given up');
    expect(calledWith('second')).toEqual([]);

    // Past it, auth.test still refused: given up again, no call.
    await sleep(1_100);
    h.slack.fail('auth.test', { error: 'token_revoked' });
    const third = await say(h, { channel: W.general, text: `${botMention(h)} third` });
    await until(() => gaveUp(third.ts).length === 1, 'third given up');
    expect(calledWith('third')).toEqual([]);

    // The token works again (the app reinstalled with the same token, the bot reactivated).
    await sleep(1_100);
    const fourth = await say(h, { channel: W.general, text: `${botMention(h)} fourth` });
    await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.text === 'echo: fourth', 15_000);
    expect(calledWith('fourth')).toHaveLength(1);
    expect(fourth.ts > third.ts).toBe(true);
  }, 30_000);

  it('the bot removed from a channel: the messages queued there before are given up without calling the agent, until it is invited back', async () => {
    h.slack.addChannel({ id: ROOM, member: false });
    const first = await say(h, { channel: ROOM, text: `${botMention(h)} room one` });
    await until(() => gaveUp(first.ts).length === 1, 'first given up');
    expect(calledWith('room one')).toHaveLength(1);
    expect(JSON.stringify(gaveUp(first.ts)[0])).toMatch(/not_in_channel/);

    const second = await say(h, { channel: ROOM, text: `${botMention(h)} room two` });
    await until(() => gaveUp(second.ts).length === 1, 'second given up');
    expect(calledWith('room two')).toEqual([]);
    expect(h.slack.callsOf('conversations.info', (c) => c.params.channel === ROOM).length).toBeGreaterThanOrEqual(1);

    // Invited back: answered again.
    h.slack.addChannel({ id: ROOM, member: true });
    const third = await say(h, { channel: ROOM, text: `${botMention(h)} room three` });
    await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.text === 'echo: room three', 15_000);
    expect(calledWith('room three')).toHaveLength(1);
    expect(third.ts > second.ts).toBe(true);
    // Another channel was never held up.
    const elsewhere = await say(h, { channel: W.general, text: `${botMention(h)} elsewhere` });
    await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.thread_ts === elsewhere.ts, 15_000);
  }, 30_000);
});
