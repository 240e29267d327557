import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mention, startDiscordBridge, until, type DiscordHarness } from './harness.js';
import type { EmuInteraction, Json } from '../emulators/discord/index.js';
import { HAS_SNAPSHOT, messageCreateEvent, messageObject } from '../emulators/discord/payloads.js';
import { snowflake } from '../emulators/discord/world.js';
import { ASK_ANSWERS } from '../../adapters/discord/commands/ask-agent.js';

/**
 * What a message says beyond its own content, with the real discord.js client against the
 * emulator: a forward (`message_reference.type` 1) carries the original in `message_snapshots`
 * and has no content of its own; a bot's message may be embeds only.
 */
let h: DiscordHarness;
beforeAll(async () => {
  h = await startDiscordBridge({ agent: { reply: (_id, message) => `echo: ${message}` } });
});
afterAll(async () => {
  await h?.close();
});

const w = () => h.discord.world;
const answered = (m: Json, label: string) => h.discord.waitFor(() => h.discord.repliesTo(m.id)[0], label);
const answerOf = (i: EmuInteraction, label: string) => h.discord.waitFor(() => i.original?.content || undefined, label);
const lastCall = () => h.agent.chatCalls().at(-1)!.message;

describe('a forwarded message', () => {
  it('reaches the agent marked as forwarded, in a DM', async () => {
    const original = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: 'the build failed at step 3\nexit code 137' });
    const forward = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.dmBob, content: '', forward: original });
    expect(forward.message_reference).toMatchObject({ type: 1, message_id: original.id });
    expect(forward.message_snapshots[0].message).not.toHaveProperty('author');
    const reply = await answered(forward, 'answer to the forward');
    expect(lastCall()).toBe('Forwarded message:\n> the build failed at step 3\n> exit code 137');
    expect(reply.content).toBe('echo: Forwarded message:\n> the build failed at step 3\n> exit code 137');
  });

  it('reaches the agent with its files, in a channel bound in `all` mode; its mentions address nobody', async () => {
    const bind = h.discord.runCommand({ user: w().users.alice, channel: w().channels.bound, subcommand: 'bind', options: { instance: 'demo-helper', mode: 'all' } });
    await h.discord.waitFor(() => bind.original?.content.includes('demo-helper'), 'bind answer');
    const original = h.discord.sendMessage({
      author: w().users.alice,
      channel: w().channels.general,
      content: `${mention(h.discord)} see the config`,
      attachments: [{ filename: 'app.json', content: '{"port": 8080}', contentType: 'application/json' }],
    });
    await answered(original, 'answer to the original');
    const forward = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.bound, content: '', forward: original });
    await answered(forward, 'answer to the forward');
    expect(lastCall()).toBe('Forwarded message:\n> @agent-bridge see the config\n\napp.json:\n```json\n{"port": 8080}\n```');

    // In a channel answering mentions only, forwarding a message that mentioned the bot is not a mention.
    const again = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: '', forward: original });
    await until(() => h.logs.matching(/message dropped/).find((l) => l.messageId === again.id && l.reason === 'not_addressed'), 'forward not addressed');
  });

  it('with a comment that mentions the bot (two messages, either order): the agent gets the forward with the question', async () => {
    const original = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.bound, content: 'disk usage at 97% on db-2' });
    // Forward first, then the comment.
    const forward = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: '', forward: original });
    const comment = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: `${mention(h.discord)} is this urgent?` });
    await answered(comment, 'answer to the comment');
    expect(lastCall()).toBe('is this urgent?\n\nForwarded message:\n> disk usage at 97% on db-2');
    expect(h.discord.repliesTo(forward.id)).toEqual([]);
    // The comment first, then the forward: both are answered, in order.
    const calls = h.agent.chatCalls().length;
    const comment2 = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: `${mention(h.discord)} and this one?` });
    const forward2 = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: '', forward: original });
    await answered(forward2, 'answer to the forward after its comment');
    expect(h.agent.chatCalls().slice(calls).map((c) => c.message)).toEqual(['and this one?', 'Forwarded message:\n> disk usage at 97% on db-2']);
    await answered(comment2, 'answer to the comment before its forward');
    // Someone else's mention right after a forward does not take it.
    const calls3 = h.agent.chatCalls().length;
    h.discord.sendMessage({ author: w().users.carol, channel: w().channels.general, content: '', forward: original });
    const other = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: `${mention(h.discord)} unrelated question` });
    await answered(other, 'answer to the other person');
    expect(h.agent.chatCalls().slice(calls3).map((c) => c.message)).toEqual(['unrelated question']);
  });

  it("reads a forwarded bot's embeds", async () => {
    const original = h.discord.sendMessage({
      author: w().users.otherBot,
      channel: w().channels.general,
      content: '',
      embeds: [{ type: 'rich', title: 'Deploy failed', description: 'service api, build 4411', fields: [{ name: 'Step', value: 'migrate' }] }],
    });
    const forward = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.dmBob, content: '', forward: original });
    await answered(forward, 'answer to the forwarded embed');
    expect(lastCall()).toBe('Forwarded message:\n> **Deploy failed**\n> service api, build 4411\n> Step: migrate');
  });
});

describe('"Ask the agent" on a message of embeds only', () => {
  it("sends the embeds' title, description and fields instead of refusing it as empty", async () => {
    const target = h.discord.sendMessage({
      author: w().users.otherBot,
      channel: w().channels.general,
      content: '',
      embeds: [
        { type: 'rich', author: { name: 'CI' }, title: 'Build #88 failed', description: 'Tests: 3 failed', fields: [{ name: 'Branch', value: 'main', inline: true }], footer: { text: 'ci.example' } },
        // A link preview: the site's words, not the message's.
        { type: 'link', title: 'Example Domain', description: 'An example site', url: 'https://example.com' },
      ],
    });
    const ask = h.discord.runMessageCommand({ user: w().users.alice, channel: w().channels.general, target });
    expect(await answerOf(ask, 'ask answer')).toBe(ASK_ANSWERS.queued('demo-helper'));
    await answered(target, 'answer to the embed');
    expect(lastCall()).toBe('other-bot wrote:\nCI\n**Build #88 failed**\nTests: 3 failed\nBranch: main\nci.example');
  });
});

describe('"Ask the agent" on a message with nothing to read', () => {
  it('answers privately that there is no text, and posts nothing under the message', async () => {
    for (const content of ['\u3164', '\u200b\u200b', '\u2800']) {
      const calls = h.agent.chatCalls().length;
      const target = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content });
      const ask = h.discord.runMessageCommand({ user: w().users.alice, channel: w().channels.general, target });
      expect(await answerOf(ask, 'ask answer')).toBe(ASK_ANSWERS.empty);
      await new Promise((r) => setTimeout(r, 200));
      expect(h.discord.repliesTo(target.id)).toEqual([]);
      expect(h.agent.chatCalls().length).toBe(calls);
    }
  });
});

describe('a poll', () => {
  it('is read as its question and answers, in a DM and by "Ask the agent"', async () => {
    const poll = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.dmBob, content: '', poll: { question: 'Which region for the new cluster?', answers: ['eu-west', 'us-east'] } });
    await answered(poll, 'answer to the poll');
    expect(lastCall()).toBe('Poll: Which region for the new cluster?\n- eu-west\n- us-east');
    const inChannel = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: '', poll: { question: 'Ship on Friday?', answers: ['yes', 'no'] } });
    const ask = h.discord.runMessageCommand({ user: w().users.alice, channel: w().channels.general, target: inChannel });
    expect(await answerOf(ask, 'ask answer')).toBe(ASK_ANSWERS.queued('demo-helper'));
    await answered(inChannel, 'answer to the asked poll');
    expect(lastCall()).toBe('Bob wrote:\nPoll: Ship on Friday?\n- yes\n- no');
  });
});

describe('odd forwards and embeds from the gateway', () => {
  it('never fail the handling of a message (odd snapshot and embed shapes read as absent), and the bot keeps answering', async () => {
    const world = w();
    const gateway = (h.discord as unknown as { gateway: { dispatch(t: string, payload: Json): void } }).gateway;
    const oddEmbeds: unknown[] = [[null], [5], [{ fields: 'x' }], [{ type: 'rich', title: 7, fields: [null, { name: 1, value: {} }], author: 'x', footer: [] }], [{ type: 42 }]];
    const oddSnapshots: unknown[] = [[{}], [{ message: null }], [{ message: { content: 5 } }], ...oddEmbeds.map((embeds) => [{ message: { content: 'x', embeds } }]), []];
    const ids: string[] = [];
    const dispatch = (extra: Json) => {
      const channel = world.channels.dmBob;
      const m = { ...messageObject({ id: snowflake(), channel, author: world.users.bob, content: '', world, mentions: [] }), ...extra };
      ids.push(m.id as string);
      h.discord.store.addMessage(channel.id, m);
      gateway.dispatch('MESSAGE_CREATE', messageCreateEvent(m, channel, world.users.bob));
    };
    // One original each: discord.js keeps a snapshot in the cache under the original's ID.
    const reference = () => ({ type: 1, message_id: snowflake(), channel_id: world.channels.general.id, guild_id: world.guildId });
    for (const snapshots of oddSnapshots) dispatch({ message_reference: reference(), message_snapshots: snapshots, flags: HAS_SNAPSHOT });
    for (const embeds of oddEmbeds) dispatch({ content: 'with odd embeds', embeds });
    const sentinel = h.discord.sendMessage({ author: world.users.bob, channel: world.channels.dmBob, content: 'sentinel after odd forwards' });
    await answered(sentinel, 'sentinel answered');
    expect(h.logs.lines.filter((l) => /message handling failed/.test(l))).toEqual([]);
    // Each was taken as a message: answered with what it had of text, or told it was empty.
    const answers = await Promise.all(ids.map((id) => h.discord.waitFor(() => h.discord.repliesTo(id)[0]?.content as string | undefined, `an answer or a notice for ${id}`)));
    expect(answers.slice(0, 3).every((a) => /^Mention me/.test(a))).toBe(true);
    expect(answers.slice(3, 3 + oddEmbeds.length)).toEqual(oddEmbeds.map(() => 'echo: Forwarded message:\n> x'));
    expect(answers.slice(-oddEmbeds.length)).toEqual(oddEmbeds.map(() => 'echo: with odd embeds'));
  });
});
