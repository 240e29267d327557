import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, chatCalls, postsIn, say, startSlackBridge, until, W, type SlackHarness } from './harness.js';

/**
 * An admin rebinds or unbinds a channel while its messages wait for a slow agent. A message is
 * answered by the instance its channel was bound to when it was sent: the waiting ones by the
 * old instance (one call each, never a second one to the new instance), the ones sent after by
 * the new one, and the admin is told how many are still answered by the old one.
 */
describe('Slack: rebind and unbind while messages of the channel wait', () => {
  let h: SlackHarness;
  let open: () => void = () => {};
  let gate: Promise<void> = Promise.resolve();
  const hold = () => (gate = new Promise<void>((resolve) => (open = resolve)));
  beforeAll(async () => {
    h = await startSlackBridge({
      mode: 'http',
      agent: {
        reply: async (instanceId, message) => {
          await gate;
          return `${instanceId} on ${/q\d+/.exec(message)?.[0] ?? '?'}`;
        },
      },
    });
  });
  afterAll(async () => h?.close());

  /** Runs `/agent <text>` as the admin in #general; its private answer. */
  async function admin(text: string): Promise<string> {
    const ack = await h.to.command({ text, user: W.admin, channel: W.general });
    const call = await h.slack.waitForCall('response_url', (c) => c.response.id === ack.responseUrlId);
    return (JSON.parse(call.params.blocks ?? '[]') as Array<{ text?: { text: string } }>).map((b) => b.text?.text ?? '').join('\n');
  }
  /** Which instances the agent service was asked each question of, in order. */
  const askedOf = (q: string) => chatCalls(h).filter((c) => new RegExp(`\\b${q}\\b`).test((c.json as { message?: string }).message ?? '')).map((c) => c.instanceId);
  const ask = (q: string, threadTs?: string) => say(h, { channel: W.general, text: `${botMention(h)} ${q}`, threadTs });

  it('rebind: the waiting messages are answered by the old instance, later ones by the new, one call each', async () => {
    hold();
    const root = await ask('q1');
    await until(() => askedOf('q1').length === 1, 'q1 is with the agent');
    await ask('q2', root.ts);
    await ask('q3', root.ts);

    const answer = await admin('bind demo-poet');
    expect(answer).toContain('It was bound to `demo-helper` before.');
    expect(answer).toContain('3 messages sent before this change are still waiting or being answered; `demo-helper` answers them');
    await ask('q4', root.ts);
    open();

    await until(() => postsIn(h, W.general, root.ts).length === 4, 'four answers');
    expect(postsIn(h, W.general, root.ts).map((c) => c.params.text)).toEqual(['demo-helper on q1', 'demo-helper on q2', 'demo-helper on q3', 'demo-poet on q4']);
    for (const q of ['q1', 'q2', 'q3']) expect(askedOf(q)).toEqual(['demo-helper']);
    expect(askedOf('q4')).toEqual(['demo-poet']);
  });

  it('unbind: the waiting messages are still answered; one sent after gets the plain notice, and no call', async () => {
    hold();
    const root = await ask('q5');
    await until(() => askedOf('q5').length === 1, 'q5 is with the agent');
    await ask('q6', root.ts);

    const answer = await admin('unbind');
    expect(answer).toContain('The bot will not answer new messages here.');
    expect(answer).toContain('2 messages sent before this change are still waiting or being answered; `demo-poet` answers them');
    const late = await ask('q7');
    open();

    await until(() => postsIn(h, W.general, root.ts).length === 2, 'both waiting messages answered');
    expect(postsIn(h, W.general, root.ts).map((c) => c.params.text)).toEqual(['demo-poet on q5', 'demo-poet on q6']);
    await until(() => postsIn(h, W.general, late.ts).length === 1, 'the notice to the late message');
    expect(postsIn(h, W.general, late.ts)[0]!.params.text).toMatch(/isn't connected to an agent/);
    expect(askedOf('q7')).toEqual([]);
  });
});
