import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEEDBACK_ANSWERS } from '../../adapters/discord/feedback/click.js';
import type { EmuChannel, Json } from '../emulators/discord/index.js';
import { mention, startDiscordBridge, type DiscordHarness } from './harness.js';

/**
 * 👍/👎 on replies the worker makes: a message goes through the real discord.js gateway client,
 * the ingress, the queue and the worker to the agent emulator, and the reply's last message
 * carries the buttons, only the last one when the reply is split. No test here calls the
 * reply port itself.
 */
const EPHEMERAL = 64;
const tagOf = (message: string) => message.split(/\s+/).at(-1) ?? '';
/** Three paragraphs of about 1,400 characters: three Discord messages (2,000 at most each). */
const longAnswer = (tag: string) => [1, 2, 3].map((n) => `Part ${n} (${tag}). ${'All work and no play. '.repeat(65).trim()}`).join('\n\n');

let h: DiscordHarness;
beforeAll(async () => {
  h = await startDiscordBridge({
    agent: { reply: (_id, message) => (message.includes('long answer') ? longAnswer(tagOf(message)) : `answer to: ${message}`) },
  });
});
afterAll(async () => {
  await h?.close();
});

const w = () => h.discord.world;
const buttonsOf = (m: Json): Json[] => ((m.components as Json[] | undefined) ?? []).flatMap((row) => (row.components as Json[] | undefined) ?? []);

describe('👍/👎 on worker replies', () => {
  it('puts them on a one-message reply, naming the instance and the agent message, and a click is thanked', async () => {
    const asked = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: `${mention(h.discord)} short question` });
    const reply = await h.discord.waitFor(() => h.discord.repliesTo(asked.id)[0], 'the reply', 30_000);
    expect(reply.content).toBe('answer to: short question');
    const buttons = buttonsOf(reply);
    expect(buttons.map((b) => b.emoji?.name)).toEqual(['👍', '👎']);
    const ids = buttons.map((b) => String(b.custom_id));
    expect(ids[0]).toMatch(/^fb:\+:demo-helper:msg_\d+$/);
    expect(ids[1]).toBe(ids[0]!.replace('fb:+:', 'fb:-:'));

    const click = h.discord.clickButton({ user: w().users.bob, channel: w().channels.general, message: reply, customId: ids[0]! });
    await h.discord.waitFor(() => click.original?.content, 'thanks', 30_000);
    expect(click.original).toEqual({ content: FEEDBACK_ANSWERS.positive, flags: EPHEMERAL });
    await expect.poll(async () => (await h.feedback.summary({ instanceIds: ['demo-helper'] }))[0]?.positive, { timeout: 15_000 }).toBe(1);
  });

  it('puts them on the last message only when the reply is split into several', async () => {
    const asked = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: `${mention(h.discord)} a long answer please tag7731` });
    const parts = await h.discord.waitFor(() => {
      const posted = h.discord.botMessages(w().channels.general.id).filter((m) => String(m.content).includes('(tag7731)'));
      return posted.length >= 3 && posted;
    }, 'the three messages of the reply', 30_000);
    expect(parts.map((m) => /^Part (\d)/.exec(String(m.content))?.[1])).toEqual(['1', '2', '3']);
    // The first message replies to the asked one; the buttons are on the last only.
    expect(parts[0]!.message_reference?.message_id).toBe(asked.id);
    expect(buttonsOf(parts[0]!)).toEqual([]);
    expect(buttonsOf(parts[1]!)).toEqual([]);
    expect(buttonsOf(parts[2]!).map((b) => b.emoji?.name)).toEqual(['👍', '👎']);
    expect(String(buttonsOf(parts[2]!)[0]!.custom_id)).toMatch(/^fb:\+:demo-helper:msg_\d+$/);
  });
});

describe('👍/👎 in a DM', () => {
  it('shows in /agent feedback in a server, in a section of its own, apart from the server', async () => {
    const vote = async (channel: EmuChannel, text: string) => {
      const asked = h.discord.sendMessage({ author: w().users.bob, channel, content: text });
      const reply = await h.discord.waitFor(() => h.discord.repliesTo(asked.id)[0], `the reply to ${text}`, 30_000);
      const down = String(buttonsOf(reply)[1]!.custom_id);
      const click = h.discord.clickButton({ user: w().users.bob, channel, message: reply, customId: down });
      await h.discord.waitFor(() => click.original?.content, 'thanks', 30_000);
      return reply;
    };
    const before = (await h.feedback.summary({ workspace: { platform: 'discord', workspaceId: w().guildId } }))[0]?.negative ?? 0;
    const inDm = await vote(w().channels.dmBob, 'what is our on-call rota?');
    await vote(w().channels.general, `${mention(h.discord)} and the escalation policy?`);
    await expect.poll(async () => (await h.feedback.summary({ workspace: { platform: 'discord', workspaceId: w().guildId } }))[0]?.negative, { timeout: 15_000 }).toBe(before + 1);
    await expect.poll(async () => (await h.feedback.summary({ workspace: { platform: 'discord', workspaceId: 'dm' } }))[0]?.negative, { timeout: 15_000 }).toBe(1);

    const fb = h.discord.runCommand({ user: w().users.alice, channel: w().channels.general, subcommand: 'feedback' });
    const text = await h.discord.waitFor(() => fb.original?.content || undefined, '/agent feedback');
    const [server, dms] = text.split(/In direct messages with the bot \(they belong to no server, so every server's admins see them\):/);
    expect(dms).toBeDefined();
    expect(server).toContain(`• demo-helper: 👍 1 · 👎 ${before + 1}`);
    expect(server).not.toContain(`@me/${w().channels.dmBob.id}`);
    expect(dms).toContain('• demo-helper: 👍 0 · 👎 1');
    expect(dms).toContain(`@me/${w().channels.dmBob.id}/${inDm.id}`);
  });
});
