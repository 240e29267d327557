import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatCalls, startSlackBridge, W, type SlackHarness } from './harness.js';

/**
 * "Ask the agent" (message shortcut `ask_agent`) goes through the ingress like any message:
 * the asker's quota counts it, an ask over the quota is refused with the quota's words and no
 * agent call, and `/agent why` explains it. Over HTTP and Socket Mode.
 */
describe.each(['http', 'socket'] as const)('"Ask the agent" quotas and /agent why over %s', (mode) => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({ mode });
  });
  afterAll(async () => {
    await h?.close();
  });

  const messageOf = (c: { json?: unknown }) => String((c.json as { message?: string }).message);

  /** `/agent <text>` by the admin in #general: the answer's raw body. */
  async function command(text: string): Promise<string> {
    const sent = await h.to.command({ text, user: W.admin, channel: W.general });
    return (await h.slack.waitForCall('response_url', (c) => c.response.id === sent.responseUrlId, 30_000)).rawBody;
  }

  it("counts against the asker's quota; the refused ask calls nobody and shows in /agent why", async () => {
    // A day's quota, so no minute boundary between the two asks can reset it.
    expect(await command('set quota user-per-day 1')).toContain('user-per-day');
    const first = h.slack.userMessage({ channel: W.general, user: W.owner, text: `first thing to ask about (${mode})` });
    const second = h.slack.userMessage({ channel: W.general, user: W.owner, text: `second thing to ask about (${mode})` });
    const ask = (ts: string) => h.to.interaction(h.slack.messageShortcut({ user: W.user, channel: W.general, messageTs: ts, callbackId: 'ask_agent' }));

    expect((await ask(first.ts)).acked).toBe(true);
    const answer = await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.thread_ts === first.ts, 30_000);
    expect(answer.params.text).toContain('first thing to ask about');

    expect((await ask(second.ts)).acked).toBe(true);
    const refusal = await h.slack.waitForCall(
      'chat.postMessage',
      (c) => c.response.ok === true && c.params.thread_ts === second.ts && /limit/.test(c.params.text ?? ''),
      30_000,
    );
    expect(refusal.params.text).toMatch(/^You've reached your limit of 1 message per day\./);
    expect(chatCalls(h).filter((c) => messageOf(c).includes('second thing to ask about'))).toEqual([]);
    expect(chatCalls(h).filter((c) => messageOf(c).includes('first thing to ask about'))).toHaveLength(1);

    // `why` names the asker (not the message's author) and the quota.
    const why = await command('why');
    expect(why).toMatch(new RegExp(`${W.user}[^\\n]*over their message quota`));
    expect(why).not.toMatch(new RegExp(`${W.owner}[^\\n]*quota`));

    expect(await command('set quota user-per-day default')).toContain('user-per-day');
  });
});
