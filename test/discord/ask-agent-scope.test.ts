import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mention, startDiscordBridge, until, type DiscordHarness } from './harness.js';
import type { EmuInteraction } from '../emulators/discord/index.js';
import { ASK_ANSWERS } from '../../adapters/discord/commands/ask-agent.js';

/**
 * Where "Ask the agent" reaches, with the real discord.js client against the emulator: not into a
 * channel where the bot may not post (the interaction's `app_permissions` says so before the
 * billed call), and not beyond the one asked message of a thread (no follow-up mark).
 */
let h: DiscordHarness;
beforeAll(async () => {
  h = await startDiscordBridge({ agent: { reply: (_id, message) => `echo: ${message}` } });
});
afterAll(async () => {
  await h?.close();
});

const w = () => h.discord.world;
const answerOf = (i: EmuInteraction, label: string) => h.discord.waitFor(() => i.original?.content || undefined, label);
const agentGot = (text: string) => h.agent.chatCalls().some((c) => c.message.includes(text));
const droppedAs = (messageId: string, reason: string) =>
  until(() => h.logs.matching(/message dropped/).find((l) => l.messageId === messageId && l.reason === reason), `${messageId} dropped as ${reason}`);

describe('"Ask the agent" where the bot may not post', () => {
  it('tells the asker privately and calls no agent, in the channel and in its threads', async () => {
    const general = w().channels.general;
    h.discord.setBotMayPost(general, false);
    try {
      for (const channel of [general, w().channels.thread]) {
        const calls = h.agent.chatCalls().length;
        const target = h.discord.sendMessage({ author: w().users.bob, channel, content: `why is the build red in ${channel.name}?` });
        const ask = h.discord.runMessageCommand({ user: w().users.alice, channel, target });
        expect(await answerOf(ask, `ask answer in ${channel.name}`)).toBe(ASK_ANSWERS.cannotPost);
        expect(ask.original?.flags).toBe(64);
        expect(h.agent.chatCalls().length).toBe(calls);
        expect(h.discord.repliesTo(target.id)).toEqual([]);
      }
    } finally {
      h.discord.setBotMayPost(general, true);
    }
    // Allowed again: the same question goes through.
    const target = h.discord.sendMessage({ author: w().users.bob, channel: general, content: 'why is the build red now?' });
    const ask = h.discord.runMessageCommand({ user: w().users.alice, channel: general, target });
    expect(await answerOf(ask, 'ask answer once allowed')).toBe(ASK_ANSWERS.queued('demo-helper'));
    await h.discord.waitFor(() => h.discord.repliesTo(target.id)[0], 'the answer');
  });
});

describe('"Ask the agent" in a thread', () => {
  it("answers the asked message only: the thread's later unmentioned messages are not sent to the agent", async () => {
    const thread = h.discord.createThread(w().channels.general, 'release 4.2');
    h.discord.sendMessage({ author: w().users.alice, channel: thread, content: 'Release notes draft for 4.2 is up, comments please' });
    const target = h.discord.sendMessage({ author: w().users.bob, channel: thread, content: 'Is the migration step reversible?' });
    const ask = h.discord.runMessageCommand({ user: w().users.bob, channel: thread, target });
    expect(await answerOf(ask, 'ask answer')).toBe(ASK_ANSWERS.queued('demo-helper'));
    await h.discord.waitFor(() => h.discord.repliesTo(target.id)[0], 'the answer to the asked message');

    const later = [
      h.discord.sendMessage({ author: w().users.alice, channel: thread, content: 'Yes, there is a down migration' }),
      h.discord.sendMessage({ author: w().users.bob, channel: thread, content: 'ok thanks, approving' }),
      h.discord.sendMessage({ author: w().users.alice, channel: thread, content: 'merged' }),
    ];
    for (const m of later) await droppedAs(m.id as string, 'not_addressed');
    expect(h.agent.chatCalls().filter((c) => /down migration|approving|merged/.test(c.message))).toEqual([]);
    expect(h.discord.botMessages(thread.id)).toHaveLength(1);
  });

  it('still takes follow-ups without a mention in a thread where the bot was mentioned', async () => {
    const thread = h.discord.createThread(w().channels.general, 'release 4.3');
    const first = h.discord.sendMessage({ author: w().users.bob, channel: thread, content: `${mention(h.discord)} what changed in 4.3?` });
    await h.discord.waitFor(() => h.discord.repliesTo(first.id)[0], 'the answer to the mention');
    const followUp = h.discord.sendMessage({ author: w().users.bob, channel: thread, content: 'and in 4.4?' });
    await h.discord.waitFor(() => h.discord.repliesTo(followUp.id)[0], 'the follow-up answered');
    expect(agentGot('and in 4.4?')).toBe(true);
  });
});
