import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mention, startDiscordBridge, type DiscordHarness } from './harness.js';
import type { EmuInteraction, Json } from '../emulators/discord/index.js';
import { ASK_ANSWERS } from '../../adapters/discord/commands/ask-agent.js';
import { FEEDBACK_ANSWERS } from '../../adapters/discord/feedback/click.js';

/**
 * Issue 14 on Discord, end to end with the real discord.js client against the emulator:
 * "Ask the agent" on any message, 👍/👎 on the last message of a reply, and text attachments.
 */
const EPHEMERAL = 64;
const FILE_SECRET = 'FILE-CONTENT-CANARY-4c9e1a';

let h: DiscordHarness;
beforeAll(async () => {
  h = await startDiscordBridge({ agent: { reply: (instanceId, message) => `echo(${instanceId}): ${message}` } });
});
afterAll(async () => {
  await h?.close();
});

const w = () => h.discord.world;
const answerOf = (i: EmuInteraction, label: string) => h.discord.waitFor(() => i.original?.content || undefined, label);

describe('"Ask the agent" (message command)', () => {
  it('is registered next to /agent as a message command without description', () => {
    const cmds = h.discord.store.commands.get(w().guildId) ?? [];
    expect(cmds.map((c) => c.name)).toEqual(['agent', 'Ask the agent']);
    const ask = cmds.find((c) => c.name === 'Ask the agent')!;
    expect(ask.type).toBe(3);
    expect(ask.description ?? '').toBe('');
  });

  it("sends the message's text and author to the channel's instance and replies to that message", async () => {
    const target = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: 'the deploy failed with exit code 137' });
    const ask = h.discord.runMessageCommand({ user: w().users.alice, channel: w().channels.general, target });
    expect(await answerOf(ask, 'ask answer')).toBe(ASK_ANSWERS.queued('demo-helper'));
    expect(ask.responses[0]).toMatchObject({ kind: 'callback', type: 5, data: { flags: EPHEMERAL } });
    const reply = await h.discord.waitFor(() => h.discord.repliesTo(target.id)[0], 'reply to the asked message');
    expect(reply.content).toBe('echo(demo-helper): Bob wrote:\nthe deploy failed with exit code 137');
    expect(h.agent.chatCalls().at(-1)!.message).toBe('Bob wrote:\nthe deploy failed with exit code 137');

    // Asking again about the same message is a duplicate: one answer stays one answer.
    const again = h.discord.runMessageCommand({ user: w().users.alice, channel: w().channels.general, target });
    expect(await answerOf(again, 'second ask')).toBe(ASK_ANSWERS.duplicate);
    // Another person asking gets an answer of their own (a second reply, not swallowed by the nonce).
    const other = h.discord.runMessageCommand({ user: w().users.carol, channel: w().channels.general, target });
    expect(await answerOf(other, 'ask by someone else')).toBe(ASK_ANSWERS.queued('demo-helper'));
    await h.discord.waitFor(() => h.discord.repliesTo(target.id).length === 2, 'second reply');
    expect(h.agent.chatCalls().filter((c) => c.message.includes('exit code 137'))).toHaveLength(2);
  });

  it('explains privately in a channel with no binding, and asks nobody', async () => {
    const calls = h.agent.chatCalls().length;
    const target = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.bound, content: 'unbound question' });
    const ask = h.discord.runMessageCommand({ user: w().users.alice, channel: w().channels.bound, target });
    expect(await answerOf(ask, 'unbound answer')).toBe(ASK_ANSWERS.notBound);
    expect(ask.original?.flags).toBe(EPHEMERAL);
    expect(h.discord.repliesTo(target.id)).toEqual([]);
    expect(h.agent.chatCalls().length).toBe(calls);
  });

  it('counts against quotas like any message (and the drop shows in /agent why)', async () => {
    const set = h.discord.runCommand({ user: w().users.alice, channel: w().channels.general, subcommand: 'set', options: { setting: 'quota-user-per-minute', value: '1' } });
    await h.discord.waitFor(() => set.original?.content.includes('user-per-minute'), 'quota set');
    const first = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: 'first of two' });
    const second = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: 'second of two' });
    const a = h.discord.runMessageCommand({ user: w().users.bob, channel: w().channels.general, target: first });
    expect(await answerOf(a, 'first ask')).toBe(ASK_ANSWERS.queued('demo-helper'));
    const b = h.discord.runMessageCommand({ user: w().users.bob, channel: w().channels.general, target: second });
    expect(await answerOf(b, 'second ask')).toBe(ASK_ANSWERS.dropped('over_quota'));
    const why = h.discord.runCommand({ user: w().users.alice, channel: w().channels.general, subcommand: 'why' });
    expect(await answerOf(why, 'why')).toMatch(/quota/i);
    const reset = h.discord.runCommand({ user: w().users.alice, channel: w().channels.general, subcommand: 'set', options: { setting: 'quota-user-per-minute', value: 'default' } });
    await h.discord.waitFor(() => reset.original?.content.includes('user-per-minute'), 'quota reset');
  });
});

describe('feedback buttons', () => {
  async function postReply(agentMessageId: string, chunks: string[], instanceId?: string): Promise<Json[]> {
    const user = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.dmBob, content: `question ${agentMessageId}` });
    await h.discord.waitFor(() => h.discord.repliesTo(user.id)[0], 'the normal answer');
    const port = h.bridge.ports.discord!;
    // A reply of its own to the same message (as "Ask the agent" makes): `replyKey` keeps the nonces apart.
    const target = { channelId: w().channels.dmBob.id, messageId: user.id, replyKey: `fb-${agentMessageId}` };
    const info = { messageId: `fb-${agentMessageId}`, total: chunks.length, mayExist: false, agentMessageId, ...(instanceId ? { instanceId } : {}) };
    for (const [i, c] of chunks.entries()) await port.postChunk(target, c, i, info);
    return h.discord.botMessages(w().channels.dmBob.id).slice(-chunks.length);
  }

  it('puts 👍/👎 on the last message of a reply only, with custom_ids within 100 characters', async () => {
    const posted = await postReply('msg_1001', ['part one', 'part two']);
    expect(posted.map((m) => m.content)).toEqual(['part one', 'part two']);
    expect(posted[0]!.components).toEqual([]);
    const buttons = (posted[1]!.components as Json[])[0]!.components as Json[];
    expect(buttons.map((b) => b.emoji.name)).toEqual(['👍', '👎']);
    for (const b of buttons) expect(b.custom_id.length).toBeLessThanOrEqual(100);
    // With the instance known, the shared encoding (instance + agent message ID) is used.
    const named = await postReply('msg_1002', ['only'], 'demo-poet');
    expect(((named[0]!.components as Json[])[0]!.components as Json[]).map((b) => b.custom_id)).toEqual(['fb:+:demo-poet:msg_1002', 'fb:-:demo-poet:msg_1002']);
    // No agent message ID, no buttons: a vote must name its reply.
    const port = h.bridge.ports.discord!;
    const user = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.dmBob, content: 'no id' });
    await h.discord.waitFor(() => h.discord.repliesTo(user.id)[0], 'answer');
    await port.postChunk({ channelId: w().channels.dmBob.id, messageId: user.id, replyKey: 'x-noid' }, 'plain', 0, { messageId: 'x-noid', total: 1, mayExist: false });
    expect(h.discord.botMessages(w().channels.dmBob.id).at(-1)!.components).toEqual([]);
  });

  it('records a click (one vote per user per reply, a change replaces it) and thanks privately', async () => {
    const [, last] = await postReply('msg_2001', ['a', 'b']);
    const up = (last!.components as Json[])[0]!.components[0].custom_id as string;
    const down = (last!.components as Json[])[0]!.components[1].custom_id as string;
    const click1 = h.discord.clickButton({ user: w().users.bob, channel: w().channels.dmBob, message: last!, customId: up });
    await h.discord.waitFor(() => click1.original?.content, 'thanks');
    expect(click1.original).toEqual({ content: FEEDBACK_ANSWERS.positive, flags: EPHEMERAL });
    expect(click1.responses[0]).toMatchObject({ kind: 'callback', type: 4 });
    const votes = async () => (await h.feedback.summary({ instanceIds: ['demo-helper'] }))[0];
    await expect.poll(async () => (await votes())?.positive).toBe(1);
    const click2 = h.discord.clickButton({ user: w().users.bob, channel: w().channels.dmBob, message: last!, customId: down });
    await h.discord.waitFor(() => click2.original?.content, 'thanks again');
    expect(click2.original?.content).toBe(FEEDBACK_ANSWERS.negative);
    await expect.poll(async () => (await votes())?.negative).toBe(1);
    const summary = await votes();
    expect(summary).toMatchObject({ positive: 0, negative: 1 });
    expect(summary!.latestNegative[0]).toMatchObject({ agentMessageId: 'msg_2001', platform: 'discord', channelId: 'dm' });
    const metrics = await h.bridge.metrics.registry.metrics();
    expect(metrics).toMatch(/agent_bridge_feedback_total\{agent_instance="demo-helper",rating="negative"\} 1/);
  });
});

describe('attachments', () => {
  it('appends text files as fenced blocks, names the rest in one line, and downloads without a token', async () => {
    const m = h.discord.sendMessage({
      author: w().users.alice,
      channel: w().channels.general,
      content: `${mention(h.discord)} what is wrong here?`,
      attachments: [
        { filename: 'build.log', content: `step 1 ok\n${FILE_SECRET}\nstep 2 failed\n` },
        { filename: 'photo.png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]), contentType: 'image/png' },
      ],
    });
    await h.discord.waitFor(() => h.discord.repliesTo(m.id).length >= 2, 'reply and files notice');
    const prompt = h.agent.chatCalls().at(-1)!.message;
    expect(prompt).toBe(`what is wrong here?\n\nbuild.log:\n\`\`\`log\nstep 1 ok\n${FILE_SECRET}\nstep 2 failed\n\`\`\``);
    const notices = h.discord.repliesTo(m.id).filter((r) => r.content.startsWith('Not sent to the agent'));
    expect(notices.map((n) => n.content)).toEqual(['Not sent to the agent: photo.png (only text files are sent).']);
    expect(h.discord.repliesTo(m.id).some((r) => /attachments aren't forwarded/.test(r.content))).toBe(false);
    const fetches = h.discord.store.fileFetches;
    expect(fetches.some((f) => f.url.endsWith('/build.log'))).toBe(true);
    expect(fetches.every((f) => f.authorization === undefined)).toBe(true);
    expect(fetches.some((f) => f.url.endsWith('/photo.png'))).toBe(false);
    expect(h.logs.text).not.toContain(FILE_SECRET);
  });

  it('does not download files of messages the bot will not answer', async () => {
    const before = h.discord.store.fileFetches.length;
    h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: 'not for the bot', attachments: [{ filename: 'a.txt', content: 'x' }] });
    const barrier = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: `${mention(h.discord)} barrier` });
    await h.discord.waitFor(() => h.discord.repliesTo(barrier.id)[0], 'barrier reply');
    expect(h.discord.store.fileFetches.length).toBe(before);
  });

  it("includes the asked message's text files with \"Ask the agent\"", async () => {
    const target = h.discord.sendMessage({
      author: w().users.bob,
      channel: w().channels.general,
      content: 'see config',
      attachments: [{ filename: 'app.json', content: '{"port": 8080}', contentType: 'application/json' }],
    });
    const ask = h.discord.runMessageCommand({ user: w().users.alice, channel: w().channels.general, target });
    expect(await answerOf(ask, 'ask with file')).toBe(ASK_ANSWERS.queued('demo-helper'));
    await h.discord.waitFor(() => h.discord.repliesTo(target.id)[0], 'reply');
    expect(h.agent.chatCalls().at(-1)!.message).toBe('Bob wrote:\nsee config\n\napp.json:\n```json\n{"port": 8080}\n```');
  });
});
