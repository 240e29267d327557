import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mention, messageCreates, startDiscordBridge, type DiscordHarness } from './harness.js';

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

  it("does not download files in a thread of a channel that isn't bound", async () => {
    const before = h.discord.store.fileFetches.length;
    h.discord.sendMessage({ author: w().users.bob, channel: w().channels.boundThread, content: 'my notes', attachments: [{ filename: 'notes.txt', content: 'private' }] });
    const barrier = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: `${mention(h.discord)} barrier` });
    await h.discord.waitFor(() => h.discord.repliesTo(barrier.id)[0], 'barrier reply');
    expect(h.discord.store.fileFetches.length).toBe(before);
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
