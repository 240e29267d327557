import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmuChannel, Json } from '../emulators/discord/index.js';
import { mention, startDiscordBridge, until, type DiscordHarness } from './harness.js';

/**
 * An admin rebinds (from inside a thread: commands there act on the parent channel) or unbinds
 * the channel while messages of one of its threads wait for a slow agent. Threads have no binding
 * of their own: each message is answered by the instance the channel was bound to when it was
 * sent, once, and the admin is told how many waiting messages the old instance still answers.
 */
describe('Discord: rebind and unbind while messages of the channel wait', () => {
  let h: DiscordHarness;
  let open: () => void = () => {};
  let gate: Promise<void> = Promise.resolve();
  const hold = () => (gate = new Promise<void>((resolve) => (open = resolve)));
  beforeAll(async () => {
    h = await startDiscordBridge({
      agent: {
        reply: async (instanceId, message) => {
          await gate;
          return `${instanceId} on ${/q\d+/.exec(message)?.[0] ?? '?'}`;
        },
      },
    });
  });
  afterAll(async () => h?.close());

  const w = () => h.discord.world;
  const general = () => w().channels.general;
  const ask = (q: string) => h.discord.sendMessage({ author: w().users.bob, channel: w().channels.thread, content: `${mention(h.discord)} ${q}` });
  const answerTo = (m: Json) => h.discord.waitFor(() => h.discord.repliesTo(m.id)[0]?.content, `the answer to ${m.content}`);
  const askedOf = (q: string) => h.agent.chatCalls().filter((c) => new RegExp(`\\b${q}\\b`).test(c.message)).map((c) => c.instanceId);
  /** The messages of #general (its threads included) accepted and not finished. */
  const waiting = (n: number) => until(async () => (await h.bridge.queue.unfinishedIn('discord', general().id)) === n, `${n} waiting`);
  async function admin(subcommand: string, options: Record<string, string>, channel: EmuChannel = w().channels.thread): Promise<string> {
    const i = h.discord.runCommand({ user: w().users.alice, channel, subcommand, options });
    return h.discord.waitFor(() => i.original?.content || undefined, `${subcommand} answer`);
  }

  it('rebind from the thread: waiting messages answered by the old instance, later ones by the new, one call each', async () => {
    hold();
    const q1 = ask('q1');
    await until(() => askedOf('q1').length === 1, 'q1 is with the agent');
    const rest = [ask('q2'), ask('q3')];
    await waiting(3);

    const answer = await admin('bind', { instance: 'demo-poet', mode: 'mention' });
    expect(answer).toContain('It was bound to `demo-helper` before.');
    expect(answer).toContain('3 messages sent before this change are still waiting or being answered; `demo-helper` answers them');
    expect(await h.bridge.bindings.get('discord', w().channels.thread.id)).toBeUndefined(); // no thread binding
    const q4 = ask('q4');
    await waiting(4);
    open();

    const answers = [];
    for (const m of [q1, ...rest, q4]) answers.push(await answerTo(m));
    expect(answers).toEqual(['demo-helper on q1', 'demo-helper on q2', 'demo-helper on q3', 'demo-poet on q4']);
    expect(['q1', 'q2', 'q3', 'q4'].map(askedOf)).toEqual([['demo-helper'], ['demo-helper'], ['demo-helper'], ['demo-poet']]);
  });

  it('unbind of the channel while a message of its thread waits: still answered; one sent after gets the notice', async () => {
    hold();
    const q5 = ask('q5');
    await until(() => askedOf('q5').length === 1, 'q5 is with the agent');
    const q6 = ask('q6');
    await waiting(2);

    const answer = await admin('unbind', {}, general());
    expect(answer).toContain('The bot will not answer new messages here.');
    expect(answer).toContain('2 messages sent before this change are still waiting or being answered; `demo-poet` answers them');
    const q7 = ask('q7');
    open();

    expect([await answerTo(q5), await answerTo(q6)]).toEqual(['demo-poet on q5', 'demo-poet on q6']);
    expect(await answerTo(q7)).toMatch(/isn't connected to an agent/);
    expect(askedOf('q7')).toEqual([]);
  });
});
