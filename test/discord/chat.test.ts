import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mention, messageCreates, startDiscordBridge, type DiscordHarness } from './harness.js';
import type { Json } from '../emulators/discord/index.js';

/** ~5,000 characters: prose paragraphs around two large code blocks. */
function longReply(): string {
  const para = (n: number) => `Paragraph ${n}: ` + 'lorem ipsum dolor sit amet '.repeat(12).trim() + '.';
  const code = (tag: string, lines: number) =>
    ['```ts', ...Array.from({ length: lines }, (_, i) => `const ${tag}${i} = compute(${i}); // line ${i} of ${tag}`), '```'].join('\n');
  return [para(1), para(2), code('alpha', 40), para(3), code('beta', 45), para(4)].join('\n\n');
}
const LONG = longReply();

let h: DiscordHarness;
beforeAll(async () => {
  h = await startDiscordBridge({
    agent: {
      reply: (instanceId, message) => {
        if (message.includes('LONG')) return LONG;
        if (message.includes('EVERYONE')) return 'Hello @everyone and @here, and <@920000000000000002> and <@&900000000000000050>!';
        return `echo(${instanceId}): ${message}`;
      },
    },
  });
});
afterAll(async () => {
  await h?.close();
});

const w = () => h.discord.world;
const replies = (m: Json) => h.discord.repliesTo(m.id);
/** Waits until the bot replied to `m` (its first chunk replies to the user's message). */
const answered = (m: Json, label: string) => h.discord.waitFor(() => replies(m)[0], label);
const fenceCount = (s: string) => s.split('\n').filter((l) => /^\s{0,3}```/.test(l)).length;

describe('discord chat through the real bridge', () => {
  it('answers a mention as a reply to the message, with typing and no mentions parsed', async () => {
    expect(h.adapter.mentionOnly).toBe(false);
    const m = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: `${mention(h.discord)} hello there` });
    const reply = await answered(m, 'reply to a mention');
    expect(reply.content).toBe('echo(demo-helper): hello there');
    expect(reply.channel_id).toBe(w().channels.general.id);
    expect(h.agent.chatCalls().map((c) => c.message)).toEqual(['hello there']);
    const [body] = messageCreates(h.discord, w().channels.general.id);
    expect(body).toMatchObject({
      allowed_mentions: { parse: [], replied_user: false },
      message_reference: { message_id: m.id, fail_if_not_exists: false },
    });
    expect(h.discord.calls.some((c) => c.method === 'POST' && c.path === `/channels/${w().channels.general.id}/typing`)).toBe(true);
  });

  it('answers a reply to one of its messages, with or without a ping', async () => {
    const botMessage = h.discord.botMessages(w().channels.general.id).at(-1)!;
    const quiet = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: 'and what about this?', replyTo: botMessage.id, pingReply: false });
    expect((await answered(quiet, 'reply to a non-pinging reply')).content).toBe('echo(demo-helper): and what about this?');
    const loud = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: 'and this?', replyTo: botMessage.id });
    expect((await answered(loud, 'reply to a pinging reply')).content).toBe('echo(demo-helper): and this?');
  });

  it('answers every message in a DM', async () => {
    const m = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.dmAlice, content: 'hi in private' });
    const reply = await answered(m, 'DM reply');
    expect(reply).toMatchObject({ channel_id: w().channels.dmAlice.id, content: 'echo(demo-helper): hi in private' });
  });

  it('answers every message of a channel bound in `all` mode', async () => {
    const bind = h.discord.runCommand({ user: w().users.alice, channel: w().channels.bound, subcommand: 'bind', options: { instance: 'demo-poet', mode: 'all' } });
    await h.discord.waitFor(() => bind.original?.content.includes('demo-poet'), 'bind answer');
    const m = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.bound, content: 'no mention at all' });
    expect((await answered(m, 'all-mode reply')).content).toBe('echo(demo-poet): no mention at all');
  });

  it('ignores its own messages, other bots and system messages', async () => {
    const callsBefore = h.agent.chatCalls().length;
    const fromBot = h.discord.sendMessage({ author: w().users.otherBot, channel: w().channels.general, content: `${mention(h.discord)} I am a bot` });
    const join = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: '', type: 7 });
    // Messages of one channel are handled in order: once this one is answered, the others were seen.
    const barrier = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: `${mention(h.discord)} barrier` });
    await answered(barrier, 'barrier reply');
    expect(replies(fromBot)).toEqual([]);
    expect(replies(join)).toEqual([]);
    expect(h.agent.chatCalls().slice(callsBefore).map((c) => c.message)).toEqual(['barrier']);
    // Every bot message came back over the gateway; none reached the agent or got a reply.
    const botIds = new Set(h.discord.botMessages().map((b) => b.id));
    expect(h.discord.botMessages().some((b) => botIds.has(b.message_reference?.message_id))).toBe(false);
    expect(h.discord.gatewayStats.dispatched.filter((d) => d.t === 'MESSAGE_CREATE').length).toBeGreaterThan(botIds.size);
  });

  it('splits a 5,000-character reply with code blocks into balanced chunks of at most 2000', async () => {
    const m = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: `${mention(h.discord)} LONG please` });
    await answered(m, 'first chunk');
    const barrier = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: `${mention(h.discord)} after long` });
    await answered(barrier, 'reply after the long one');
    const all = h.discord.botMessages(w().channels.general.id);
    const chunks = all.slice(all.indexOf(replies(m)[0]!), all.indexOf(replies(barrier)[0]!));
    expect(LONG.length).toBeGreaterThan(4900);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    for (const c of chunks) {
      expect(c.content.length).toBeLessThanOrEqual(2000);
      expect(fenceCount(c.content) % 2).toBe(0);
    }
    const text = chunks.map((c) => c.content).join('\n');
    for (const line of LONG.split('\n').filter((l) => l.startsWith('const '))) expect(text).toContain(line);
    // Only the first chunk is a reply; every chunk parses no mentions.
    expect(chunks.slice(1).every((c) => !c.message_reference)).toBe(true);
    expect(messageCreates(h.discord).every((b) => Array.isArray(b.allowed_mentions?.parse) && b.allowed_mentions.parse.length === 0)).toBe(true);
  });

  it('sends @everyone from the agent with allowed_mentions.parse empty, so nobody is pinged', async () => {
    const m = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: `${mention(h.discord)} EVERYONE` });
    const reply = await answered(m, '@everyone reply');
    expect(reply.content).toContain('@everyone');
    expect(reply.mention_everyone).toBe(false);
    expect(reply.mentions).toEqual([]);
    const body = messageCreates(h.discord).find((b) => String(b.content).includes('@everyone'));
    expect(body?.allowed_mentions).toEqual({ parse: [], replied_user: false });
  });

  it('answers in a thread of a bound channel, then follows the thread without mentions', async () => {
    const first = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.thread, content: `${mention(h.discord)} in a thread` });
    expect((await answered(first, 'thread reply')).channel_id).toBe(w().channels.thread.id);
    const next = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.thread, content: 'follow-up without mention' });
    expect((await answered(next, 'thread follow-up')).content).toBe('echo(demo-helper): follow-up without mention');
  });

  it('tells the user once which files were not sent, and hints on an empty mention', async () => {
    const image = { filename: 'screen.png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0]), contentType: 'image/png' };
    const withFile = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: `${mention(h.discord)} see file`, attachments: [image] });
    await h.discord.waitFor(() => replies(withFile).length >= 2 && replies(withFile), 'reply and attachment notice');
    expect(replies(withFile).filter((r) => /not sent to the agent/i.test(r.content)).map((r) => r.content)).toEqual([
      'Not sent to the agent: screen.png (only text files are sent).',
    ]);
    const empty = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: mention(h.discord) });
    expect((await answered(empty, 'hint')).content).toMatch(/mention me/i);
  });

  it('sends the thread transcript with the message when the channel opted in (context thread)', async () => {
    const set = h.discord.runCommand({ user: w().users.alice, channel: w().channels.general, subcommand: 'set', options: { setting: 'context', value: 'thread' } });
    await h.discord.waitFor(() => set.original?.content.includes('Setting changed'), 'context set');
    h.discord.sendMessage({ author: w().users.alice, channel: w().channels.thread, content: 'the build is red since Monday' });
    const m = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.thread, content: `${mention(h.discord)} why is it red?` });
    await answered(m, 'reply with context');
    const prompt = h.agent.chatCalls().at(-1)!.message;
    expect(prompt).toMatch(/^Earlier messages in this thread:/);
    expect(prompt).toContain('Alice: the build is red since Monday');
    expect(prompt).toMatch(/agent-bridge \(bot\): echo/);
    expect(prompt.trimEnd().endsWith('why is it red?')).toBe(true);
    expect(prompt).not.toContain(m.id);
  });
});
