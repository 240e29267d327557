import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mention, startDiscordBridge, type DiscordHarness } from './harness.js';
import { MENTION_ONLY_CONTEXT_NOTE } from '../../adapters/discord/commands/mention-only-note.js';

/** The application lacks the privileged Message Content intent: the gateway closes with 4014. */
let h: DiscordHarness;
beforeAll(async () => {
  h = await startDiscordBridge({
    emulator: { allowMessageContent: false },
    agent: { reply: (_id, message) => `echo: ${message}` },
  });
});
afterAll(async () => {
  await h?.close();
});

const w = () => h.discord.world;

describe('discord without the Message Content intent (close 4014)', () => {
  it('reconnects without the intent and logs one clear warning', () => {
    expect(h.discord.gatewayStats.closes).toEqual([4014]);
    expect(h.adapter.mentionOnly).toBe(true);
    const warnings = h.logs.lines.filter((l) => l.includes('Message Content Intent'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40 });
    expect(warnings[0]).toMatch(/Developer Portal → your application → Bot/);
  });

  it('still answers mentions and DMs', async () => {
    const m = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: `${mention(h.discord)} can you read me?` });
    expect((await h.discord.waitFor(() => h.discord.repliesTo(m.id)[0], 'mention reply')).content).toBe('echo: can you read me?');
    const dm = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.dmAlice, content: 'private question' });
    expect((await h.discord.waitFor(() => h.discord.repliesTo(dm.id)[0], 'DM reply')).content).toBe('echo: private question');
  });

  it('records messages that arrived without content, and /agent why says so', async () => {
    const plain = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: 'you cannot read this' });
    const barrier = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: `${mention(h.discord)} barrier` });
    await h.discord.waitFor(() => h.discord.repliesTo(barrier.id)[0], 'barrier reply');
    expect(h.discord.repliesTo(plain.id)).toHaveLength(0);
    expect(h.agent.chatCalls().some((c) => c.message.includes('cannot read'))).toBe(false);
    const why = h.discord.runCommand({ user: w().users.alice, channel: w().channels.general, subcommand: 'why' });
    const text = await h.discord.waitFor(() => why.original?.content || undefined, 'why answer');
    expect(text).toMatch(/content/i);
    // Still exactly one warning after all this traffic.
    expect(h.logs.lines.filter((l) => l.includes('Message Content Intent'))).toHaveLength(1);
  });
});

describe('discord mention-only mode in a channel bound with `all`', () => {
  // Core issue (src/ingress/ingress.ts): `all` mode counts as addressed before `contentMissing`
  // is looked at, so every unreadable message gets the empty-message hint. Flip to `it` once
  // ingress drops contentMissing messages as `content_missing` before the empty check.
  it('drops unreadable messages silently as content_missing instead of hinting', async () => {
    const bind = h.discord.runCommand({ user: w().users.alice, channel: w().channels.bound, subcommand: 'bind', options: { instance: 'demo-helper', mode: 'all' } });
    await h.discord.waitFor(() => bind.original?.content || undefined, 'bind answer');
    const plain = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.bound, content: 'unreadable in all mode' });
    const barrier = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.bound, content: `${mention(h.discord)} barrier` });
    await h.discord.waitFor(() => h.discord.repliesTo(barrier.id)[0], 'barrier reply');
    expect(h.discord.repliesTo(plain.id)).toHaveLength(0);
  });
});

describe('discord mention-only mode with thread context', () => {
  it("tells the admin who turns it on, and /agent status, that other people's messages can't be included", async () => {
    const general = w().channels.general;
    const set = h.discord.runCommand({ user: w().users.alice, channel: general, subcommand: 'set', options: { setting: 'context', value: 'thread' } });
    const setText = await h.discord.waitFor(() => set.original?.content || undefined, 'set context answer');
    expect(setText).toContain("with the thread's earlier messages");
    expect(setText).toContain(MENTION_ONLY_CONTEXT_NOTE);
    const status = h.discord.runCommand({ user: w().users.alice, channel: general, subcommand: 'status' });
    const statusText = await h.discord.waitFor(() => status.original?.content || undefined, 'status answer');
    expect(statusText).toContain('thread context `thread`');
    expect(statusText).toContain(MENTION_ONLY_CONTEXT_NOTE);
    const off = h.discord.runCommand({ user: w().users.alice, channel: general, subcommand: 'set', options: { setting: 'context', value: 'off' } });
    expect(await h.discord.waitFor(() => off.original?.content || undefined, 'context off answer')).not.toContain(MENTION_ONLY_CONTEXT_NOTE);
    const on = h.discord.runCommand({ user: w().users.alice, channel: general, subcommand: 'set', options: { setting: 'context', value: 'thread' } });
    await h.discord.waitFor(() => on.original?.content || undefined, 'context on again');

    // What that note is about: Discord blanks other people's messages on REST reads too.
    const thread = w().channels.thread;
    h.discord.sendMessage({ author: w().users.carol, channel: thread, content: 'api p99 jumped to 2 s at 14:00' });
    const q = h.discord.sendMessage({ author: w().users.bob, channel: thread, content: `${mention(h.discord)} what is the likely cause?` });
    await h.discord.waitFor(() => h.discord.repliesTo(q.id)[0], 'reply in the thread');
    expect(h.agent.chatCalls().at(-1)!.message).not.toContain('p99');
  });
});
