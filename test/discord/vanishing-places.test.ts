import { describe, expect, it } from 'vitest';
import { ASK_ANSWERS, askMessageId } from '../../adapters/discord/commands/ask-agent.js';
import { mention, messageCreates, startDiscordBridge, until, type DiscordHarness } from './harness.js';
import { HeldCalls } from '../support/held-calls.js';
import { openForAll } from '../support/open-for-all.js';
import { heldQuestions } from './held-questions.js';

/**
 * The place a reply should go changes or disappears while messages wait in line or the agent
 * call runs: the question deleted, the channel or thread deleted, the thread locked, the bot
 * removed from the server. No billed call for what cannot be answered, no retry against a place
 * that is gone, and the give-up said in the log with its IDs.
 */

/** Agent calls whose message holds `HOLD` wait until released (one gate per test). */
const held = new HeldCalls();
let h: DiscordHarness;
openForAll(async () => (h = await startDiscordBridge({ emulator: { extraGuilds: 1 }, extraChannels: 5, held })));
const { called, say, heldQuestion, queued, release } = heldQuestions(() => h, held);
const w = () => h.discord.world;
/** Lets the workers settle on the messages of this test (a later message in another place is answered). */
async function barrier(label: string): Promise<void> {
  const m = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: `${mention(h.discord)} barrier ${label}` });
  await h.discord.waitFor(() => h.discord.repliesTo(m.id)[0], `barrier ${label} answered`);
}
const posts = (channelId: string) => h.discord.calls.filter((c) => c.method === 'POST' && c.path === `/channels/${channelId}/messages`);

describe('a question deleted before it is answered', () => {
  it('is not sent to the agent when deleted while it waits in line', async () => {
    const channel = h.extra[0]!;
    const first = await heldQuestion(channel, 'first in line');
    const queued = say(channel, 'deleted while queued');
    // Its MESSAGE_DELETE reaches the bridge after its MESSAGE_CREATE (same channel, in order).
    h.discord.deleteMessage(queued);
    await until(() => h.logs.text.includes('deleted before it was answered'), 'withdrawal logged');
    release();
    await h.discord.waitFor(() => h.discord.repliesTo(first.id)[0], 'first answered');
    const after = say(channel, 'after the deleted one');
    await h.discord.waitFor(() => h.discord.botMessages(channel.id).some((m) => m.content === 'echo: after the deleted one'), 'next one answered');
    // Before: the deleted question was billed, and its answer posted under nothing.
    expect(called('deleted while queued')).toBe(0);
    expect(h.discord.botMessages(channel.id).some((m) => String(m.content).includes('deleted while queued'))).toBe(false);
    expect(h.logs.matching(/deleted before it was answered/)[0]).toMatchObject({ messageId: queued.id, channelId: channel.id });
    expect(h.discord.repliesTo(after.id)).toHaveLength(1);
  });

  it('is not sent to the agent when deleted while it waits in line in a thread', async () => {
    const thread = h.discord.createThread(h.extra[0]!, 'a thread with a regret');
    await heldQuestion(thread, 'first in the thread');
    const regretted = say(thread, 'regretted in the thread');
    await queued([regretted]);
    h.discord.deleteMessage(regretted);
    await until(() => h.logs.matching(/deleted before it was answered/).some((l) => l.messageId === regretted.id), 'withdrawal logged');
    release();
    const next = say(thread, 'next in the thread');
    await h.discord.waitFor(() => h.discord.repliesTo(next.id)[0], 'next one answered');
    expect(called('regretted in the thread')).toBe(0);
  });

  it('"Ask the agent" about a message deleted while the ask waits in line: the agent is not asked it, and the asker is told nothing more', async () => {
    const channel = h.extra[0]!;
    const first = await heldQuestion(channel, 'first before the ask');
    const target = h.discord.sendMessage({ author: w().users.bob, channel, content: 'my password is hunter2, oops' });
    const ask = h.discord.runMessageCommand({ user: w().users.alice, channel, target });
    expect(await h.discord.waitFor(() => ask.original?.content || undefined, 'ask queued')).toBe(ASK_ANSWERS.queued('demo-helper'));
    const askId = askMessageId(String(target.id), String(w().users.alice.id));
    h.discord.deleteMessage(target);
    await until(() => h.logs.matching(/deleted before it was answered/).some((l) => l.messageId === askId), 'ask withdrawn');
    release();
    await h.discord.waitFor(() => h.discord.repliesTo(first.id)[0], 'first answered');
    await barrier('after the withdrawn ask');
    const after = say(channel, 'after the withdrawn ask');
    await h.discord.waitFor(() => h.discord.repliesTo(after.id)[0], 'next one answered');
    expect(called('hunter2')).toBe(0);
    expect(h.discord.botMessages(channel.id).some((m) => String(m.content).includes('hunter2'))).toBe(false);
    // What the asker was told when asking stands: no edit, no follow-up about the withdrawal.
    expect(ask.original?.content).toBe(ASK_ANSWERS.queued('demo-helper'));
    expect(ask.followups).toEqual([]);
  });

  it('deleted while its call runs: not asked again, and the billed answer is posted once, as a plain message', async () => {
    const channel = h.extra[0]!;
    const m = await heldQuestion(channel, 'deleted during the call');
    h.discord.deleteMessage(m);
    await until(() => h.logs.text.includes('deleted while the agent worked on it'), 'deletion during the call logged');
    release();
    const answer = await h.discord.waitFor(() => h.discord.botMessages(channel.id).find((b) => b.content === 'echo: HOLD deleted during the call'), 'answer posted');
    expect(answer.message_reference).toBeUndefined();
    expect(called('deleted during the call')).toBe(1);
    // One create: the reply carried `fail_if_not_exists: false`, so Discord took it without the question.
    const creates = messageCreates(h.discord, channel.id).filter((b) => b.content === 'echo: HOLD deleted during the call');
    expect(creates).toHaveLength(1);
    expect(creates[0]!.message_reference).toMatchObject({ message_id: m.id, fail_if_not_exists: false });
  });
});

describe('a channel or thread deleted while messages wait', () => {
  it('sends nothing more to the agent for a deleted channel, does not retry, and removes its binding', async () => {
    const channel = h.extra[1]!;
    const first = await heldQuestion(channel, 'before the channel went');
    await queued([say(channel, 'queued one'), say(channel, 'queued two')]);
    h.discord.deleteChannel(channel);
    await until(() => h.logs.text.includes('a channel was deleted'), 'deletion seen by the bridge');
    release();
    await until(() => h.logs.matching(/gave up on a message/).filter((l) => String(l.conversationId).includes(channel.id)).length >= 3, 'all three given up');
    await barrier('after channel delete');
    // The held call was billed already; the queued two are not (before: both were, then refused).
    expect(called('queued one') + called('queued two')).toBe(0);
    // One refused post (the held answer), no retry, no notice or ⚠️ sent to a channel that is gone.
    expect(posts(channel.id).map((c) => c.status)).toEqual([404]);
    expect(h.discord.calls.filter((c) => c.path.startsWith(`/channels/${channel.id}/`) && c.method === 'PUT')).toEqual([]);
    expect(h.discord.repliesTo(first.id)).toEqual([]);
    expect(await h.bridge.bindings.get('discord', channel.id)).toBeUndefined();
    // Each give-up is one line that says why in plain words, with the channel's ID.
    const gaveUp = h.logs.matching(/gave up on a message/).filter((l) => String(l.conversationId).includes(channel.id));
    expect(gaveUp.filter((l) => JSON.stringify(l).includes(`Discord channel ${channel.id} was deleted`))).toHaveLength(2);
    const refs = new Set(gaveUp.map((l) => l.ref));
    expect(h.logs.matching(/could not tell the user/).filter((l) => refs.has(l.ref))).toEqual([]);
    expect(h.logs.text).not.toContain(h.discord.token);
  });

  it('drops, without an error, messages whose channel is deleted while the bridge takes them in', async () => {
    const channel = h.extra[3]!;
    const before = h.agent.chatCalls().length;
    // Before: discord.js had dropped the channel by the time these were taken in (TypeError on `message.channel`).
    const sent = [say(channel, 'taken in late one'), say(channel, 'taken in late two')];
    h.discord.deleteChannel(channel);
    await until(() => h.logs.matching(/channel of a message was deleted before it was taken in|discord message handled|discord message handling failed/).filter((l) => sent.some((m) => m.id === l.messageId)).length === 2, 'both taken in');
    await barrier('after late intake');
    expect(h.logs.matching(/discord message handling failed/).filter((l) => sent.some((m) => m.id === l.messageId))).toEqual([]);
    expect(h.agent.chatCalls().slice(before).filter((c) => c.message.includes('taken in late'))).toEqual([]);
  });

  it('sends nothing more to the agent for a deleted thread', async () => {
    const thread = h.discord.createThread(h.extra[2]!, 'short-lived');
    const first = await heldQuestion(thread, 'in a thread about to go');
    await queued([say(thread, 'queued in the thread')]);
    h.discord.deleteChannel(thread);
    await until(() => h.logs.text.includes('a thread was deleted'), 'thread deletion seen');
    release();
    await until(() => h.logs.matching(/gave up on a message/).filter((l) => String(l.conversationId).includes(thread.id)).length >= 2, 'both given up');
    expect(called('queued in the thread')).toBe(0);
    expect(posts(thread.id).map((c) => c.status)).toEqual([404]);
    expect(h.discord.repliesTo(first.id)).toEqual([]);
    // The parent channel keeps its binding and is answered.
    expect(await h.bridge.bindings.get('discord', h.extra[2]!.id)).toBeDefined();
    const m = say(h.extra[2]!, 'parent still here');
    await h.discord.waitFor(() => h.discord.repliesTo(m.id)[0], 'parent answered');
  });
});

describe('a thread archived or locked while the call runs', () => {
  it('holds: an archived thread is unarchived by the reply', async () => {
    const thread = h.discord.createThread(h.extra[2]!, 'archived later');
    const m = await heldQuestion(thread, 'archived meanwhile');
    h.discord.setThreadArchived(thread, { archived: true });
    release();
    await h.discord.waitFor(() => h.discord.repliesTo(m.id)[0], 'answered in the archived thread');
    expect(thread.archived).toBe(false);
  });

  it('a locked archived thread refuses the reply once (50083), and what is queued there is not sent to the agent', async () => {
    const thread = h.discord.createThread(h.extra[2]!, 'locked later');
    const m = await heldQuestion(thread, 'locked meanwhile');
    await queued([say(thread, 'queued before the lock')]);
    h.discord.setThreadArchived(thread, { archived: true, locked: true });
    await until(async () => (await h.bridge.redis.exists(`${h.bridge.config.queue.prefix}:discord:gone:${thread.id}`)) === 1, 'lock seen by the bridge');
    release();
    await until(() => h.logs.matching(/gave up on a message/).filter((l) => String(l.conversationId).includes(thread.id)).length === 2, 'both given up');
    await barrier('after lock');
    // One refused post (the held answer), no retry; before, the queued one was billed and refused too.
    expect(posts(thread.id).map((c) => c.status)).toEqual([400]);
    expect(h.discord.repliesTo(m.id)).toEqual([]);
    expect(called('locked meanwhile')).toBe(1);
    expect(called('queued before the lock')).toBe(0);
    // Unlocked and unarchived: answered again.
    h.discord.setThreadArchived(thread, { archived: false, locked: false });
    await until(async () => (await h.bridge.redis.exists(`${h.bridge.config.queue.prefix}:discord:gone:${thread.id}`)) === 0, 'unlock seen by the bridge');
    const again = say(thread, 'after the unlock');
    await h.discord.waitFor(() => h.discord.repliesTo(again.id)[0], 'answered after the unlock');
  });
});

describe('the bot loses access to a channel while messages wait', () => {
  it('gives up on what is queued there without calling the agent, once the answer before it was refused', async () => {
    const channel = h.extra[4]!;
    const first = await heldQuestion(channel, 'before access was lost');
    await queued([say(channel, 'queued before access was lost')]);
    h.discord.store.noAccess.add(channel.id);
    release();
    await until(() => h.logs.matching(/gave up on a message/).filter((l) => String(l.conversationId).includes(channel.id)).length === 2, 'both given up');
    await barrier('after access lost');
    // Before: the queued one was billed and refused as well (a second 403 toward Discord's IP ban).
    expect(called('queued before access was lost')).toBe(0);
    expect(posts(channel.id).map((c) => c.status)).toEqual([403]);
    expect(h.discord.repliesTo(first.id)).toEqual([]);
    const gaveUp = h.logs.matching(/gave up on a message/).filter((l) => String(l.conversationId).includes(channel.id));
    expect(JSON.stringify(gaveUp.at(-1))).toContain('Missing Access');
  });
});

describe('the bot removed from a server', () => {
  it('sends nothing more to the agent for that server, removes its bindings, and answers there again once added back and bound', async () => {
    const guild = w().extraGuilds[0]!;
    const channel = guild.channel;
    await h.bridge.bindings.set('discord', channel.id, { instanceId: 'demo-helper', mode: 'all', errorPolicy: 'reply', context: 'off', source: 'admin' });
    const first = await heldQuestion(channel, 'before the kick');
    await queued([say(channel, 'queued before the kick')]);
    h.discord.removeBotFromGuild(guild.id);
    await until(() => h.logs.text.includes('the bot was removed from a server'), 'removal seen by the bridge');
    release();
    await until(() => h.logs.matching(/gave up on a message/).some((l) => String(l.conversationId).includes(channel.id)), 'held one given up');
    await barrier('after kick');
    expect(called('queued before the kick')).toBe(0);
    expect(posts(channel.id).map((c) => c.status)).toEqual([403]);
    expect(h.discord.repliesTo(first.id)).toEqual([]);
    expect(await h.bridge.bindings.get('discord', channel.id)).toBeUndefined();
    expect(h.logs.matching(/the bot was removed from a server/)[0]).toMatchObject({ guildId: guild.id, unbound: 1 });
    // One line per message given up: no refused notice attempted there, nor a line about it.
    const refs = new Set(h.logs.matching(/gave up on a message/).filter((l) => String(l.conversationId).includes(channel.id)).map((l) => l.ref));
    expect(h.logs.matching(/could not tell the user/).filter((l) => refs.has(l.ref))).toEqual([]);
    // Added back and bound again: its channels are answered again.
    h.discord.addBotToGuild(guild.id);
    await until(async () => (await h.bridge.redis.exists(`${h.bridge.config.queue.prefix}:discord:gone:${channel.id}`)) === 0, 'its channel no longer marked gone');
    await h.bridge.bindings.set('discord', channel.id, { instanceId: 'demo-helper', mode: 'all', errorPolicy: 'reply', context: 'off', source: 'admin' });
    const back = say(channel, 'after coming back');
    await h.discord.waitFor(() => h.discord.repliesTo(back.id)[0], 'answered after coming back');
  });
});
