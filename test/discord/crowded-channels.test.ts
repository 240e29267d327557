import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mention, messageCreates, startDiscordBridge, until, type DiscordHarness } from './harness.js';

/**
 * What a busy or hostile channel must not do to everyone else in it: a flood of refused messages
 * under Discord's per-channel rate limit, a channel the bot may not read the history of, files in
 * threads it will never answer, and (with DISCORD_ALLOW_BOTS) another bot that answers every reply.
 */
describe('Discord: crowded channels', () => {
  let h: DiscordHarness;
  const w = () => h.discord.world;

  beforeAll(async () => {
    h = await startDiscordBridge({ agent: { reply: (_id, message) => `echo: ${message}` } });
  });
  afterAll(async () => h?.close());

  it("a flood of bare mentions gets at most 5 notices and does not hold up another user's question", async () => {
    h.discord.rateLimitMessageCreates(5, 5_000);
    try {
      for (let n = 0; n < 25; n++) h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: mention(h.discord) });
      const real = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: `${mention(h.discord)} real question` });
      // Behind 25 awaited notices in a 5-per-5 s bucket, this took about 25 s.
      await h.discord.waitFor(() => h.agent.chatCalls().some((c) => c.message === 'real question'), 'the real question reaches the agent', 8_000);
      await h.discord.waitFor(() => h.discord.repliesTo(real.id)[0], 'the real question is answered');
      const notices = h.discord.botMessages(w().channels.general.id).filter((m) => /^Mention me/.test(String(m.content)));
      // One user's flood: 5 notices in 10 s (one Discord bucket), not 25.
      expect(notices).toHaveLength(5);
    } finally {
      h.discord.store.messageCreateBucket = undefined;
    }
  }, 30_000);

  it('answers as a plain message where Discord refuses replies (no Read Message History, 160002)', async () => {
    h.discord.store.noReadHistory.add(w().channels.general.id);
    try {
      const m = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: `${mention(h.discord)} history-less` });
      const posted = await h.discord.waitFor(
        () => h.discord.botMessages(w().channels.general.id).find((x) => x.content === 'echo: history-less'),
        'the answer, posted without a reply reference',
      );
      expect(posted.message_reference).toBeUndefined();
      const attempts = messageCreates(h.discord, w().channels.general.id).filter((b) => b.content === 'echo: history-less');
      expect(attempts.map((b) => b.message_reference?.message_id)).toEqual([m.id, undefined]);
    } finally {
      h.discord.store.noReadHistory.delete(w().channels.general.id);
    }
  });

  it('sends nothing to the agent from a channel where the bot may read but not post, and says why in the log', async () => {
    const general = w().channels.general;
    const warnings = () => h.logs.matching(/may not post in it/);
    h.discord.setBotMayPost(general, false);
    try {
      // CHANNEL_UPDATE is on the same shard as the messages below, so discord.js has it first.
      const before = h.agent.chatCalls().length;
      const postsBefore = messageCreates(h.discord).length;
      const callsBefore = h.discord.calls.length;
      h.discord.sendMessage({ author: w().users.alice, channel: general, content: `${mention(h.discord)} unanswerable` });
      h.discord.sendMessage({ author: w().users.bob, channel: general, content: `${mention(h.discord)} unanswerable too` });
      h.discord.sendMessage({ author: w().users.alice, channel: w().channels.thread, content: `${mention(h.discord)} unanswerable in a thread` });
      await until(() => warnings().length >= 2, 'a warning for the channel and one for its thread');
      const barrier = h.discord.sendMessage({ author: w().users.bob, channel: general, content: 'later' });
      const dm = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.dmBob, content: 'barrier in a DM' });
      await h.discord.waitFor(() => h.discord.repliesTo(dm.id)[0], 'the DM answer');
      expect(barrier.id).toBeDefined();
      expect(h.agent.chatCalls().slice(before).map((c) => c.message)).toEqual(['barrier in a DM']);
      // No post or typing was even tried there: each would be a refused request counted toward Discord's ban.
      expect(messageCreates(h.discord).length - postsBefore).toBe(1);
      expect(h.discord.calls.slice(callsBefore).filter((c) => c.status === 403).map((c) => c.path)).toEqual([]);
      // Once per channel, not per message.
      expect(warnings().map((l) => l.channelId).sort()).toEqual([general.id, w().channels.thread.id].sort());
    } finally {
      h.discord.setBotMayPost(general, true);
    }
    // Allowed again: answered as usual.
    const again = h.discord.sendMessage({ author: w().users.alice, channel: general, content: `${mention(h.discord)} answerable` });
    await h.discord.waitFor(() => h.discord.repliesTo(again.id)[0], 'the answer once the bot may post');
  });

  it("does not download files in a thread of a channel that isn't bound", async () => {
    const before = h.discord.store.fileFetches.length;
    h.discord.sendMessage({ author: w().users.bob, channel: w().channels.boundThread, content: 'my notes', attachments: [{ filename: 'notes.txt', content: 'private' }] });
    const barrier = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: `${mention(h.discord)} barrier` });
    await h.discord.waitFor(() => h.discord.repliesTo(barrier.id)[0], 'barrier reply');
    expect(h.discord.store.fileFetches.length).toBe(before);
  });
});

describe("Discord: a guild whose roles don't grant the bot anything", () => {
  let h: DiscordHarness;
  const w = () => h.discord.world;

  beforeAll(async () => {
    h = await startDiscordBridge({ agent: { reply: (_id, message) => `echo: ${message}` }, emulator: { rolePermissions: '0' } });
  });
  afterAll(async () => h?.close());

  // Only an overwrite that takes away what the roles grant is a sure "may not post": a verdict
  // from roles alone (a platform or emulator that leaves them empty) would silence the bot.
  it('still answers: roles that never granted Send Messages are no verdict', async () => {
    const m = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: `${mention(h.discord)} roles say nothing` });
    await h.discord.waitFor(() => h.discord.repliesTo(m.id)[0], 'the answer');
    const t = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.thread, content: `${mention(h.discord)} in a thread` });
    await h.discord.waitFor(() => h.discord.repliesTo(t.id)[0], 'the answer in the thread');
    expect(h.logs.matching(/may not post in it/)).toEqual([]);
  });
});

describe('Discord: DISCORD_ALLOW_BOTS and another bot', () => {
  let h: DiscordHarness;
  const w = () => h.discord.world;

  beforeAll(async () => {
    h = await startDiscordBridge({ agent: { reply: (_id, message) => `echo: ${message.slice(0, 40)}` }, env: { DISCORD_ALLOW_BOTS: 'true' } });
  });
  afterAll(async () => h?.close());

  it('answers its mention once, not its replies: two bots answering each other do not loop', async () => {
    const seen = new Set<string>();
    let replies = 0;
    // The other bot answers every message of the bridge with a pinging reply, and keeps going.
    const answerBack = () => {
      for (const m of h.discord.botMessages(w().channels.general.id)) {
        if (seen.has(String(m.id))) continue;
        seen.add(String(m.id));
        replies++;
        h.discord.sendMessage({ author: w().users.otherBot, channel: w().channels.general, content: 'and what about that?', replyTo: String(m.id) });
      }
    };
    for (const m of h.discord.botMessages(w().channels.general.id)) seen.add(String(m.id));
    h.discord.on('change', answerBack);
    try {
      const first = h.discord.sendMessage({ author: w().users.otherBot, channel: w().channels.general, content: `${mention(h.discord)} hello` });
      await h.discord.waitFor(() => h.discord.repliesTo(first.id)[0], 'the answer to the mention');
      await h.discord.waitFor(() => replies >= 1 && h.agent.chatCalls().length >= 1 && h.discord.botMessages(w().channels.general.id), 'the other bot replied');
      // Settle: with the loop, each reply was another billed call within ~100 ms.
      const barrier = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: `${mention(h.discord)} barrier` });
      await h.discord.waitFor(() => h.discord.repliesTo(barrier.id)[0], 'barrier reply');
      expect(h.agent.chatCalls().map((c) => c.message)).toEqual(['hello', 'barrier']);
    } finally {
      h.discord.off('change', answerBack);
    }
  });

  it("caps another bot's mentions per channel", async () => {
    const before = h.agent.chatCalls().length;
    const sent = Array.from({ length: 25 }, (_, n) =>
      h.discord.sendMessage({ author: w().users.otherBot, channel: w().channels.general, content: `${mention(h.discord)} turn ${n}` }),
    );
    await h.discord.waitFor(() => h.discord.repliesTo(sent[18]!.id)[0], 'the last answer under the cap');
    const barrier = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: `${mention(h.discord)} people still get answers` });
    await h.discord.waitFor(() => h.discord.repliesTo(barrier.id)[0], 'barrier reply');
    const turns = h.agent.chatCalls().slice(before).filter((c) => c.message.startsWith('turn '));
    // The first test's mention was one turn of this channel's window.
    expect(turns).toHaveLength(19);
    expect(h.logs.text).toContain('bot messages in this channel are ignored for now');
  });
});
