import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from 'discord.js';
import { ChannelType } from 'discord.js';
import { GATEWAY_CACHE_LIMITS, sweepIdleDirectMessages } from '../../adapters/discord/gateway-cache.js';
import type { EmuChannel, EmuUser, Json } from '../emulators/discord/index.js';
import { mention, startDiscordBridge, until, type DiscordHarness } from './harness.js';

// A process that runs for weeks sees every author of every server it is in. discord.js's
// defaults kept each of them (as a user and as a guild member) for the life of the process,
// and 200 messages per channel.
const AUTHORS = 1_500;

let h: DiscordHarness;
let client: Client;
beforeAll(async () => {
  h = await startDiscordBridge();
  client = h.adapter.client!;
}, 30_000);
afterAll(() => h?.close());

const someone = (i: number): EmuUser => ({
  id: String(950_000_000_000_000_001n + BigInt(i)),
  username: `member${i}`,
  globalName: `Member ${i}`,
  roles: [],
  permissions: h.discord.world.users.bob.permissions,
});
const answerTo = (m: Json, text: RegExp) =>
  h.discord.waitFor(() => h.discord.repliesTo(m.id).find((r) => text.test(String(r.content))), `answer to ${m.id}`, 30_000);

describe('the gateway client keeps a bounded cache over a long life', () => {
  it(`holds at most ${GATEWAY_CACHE_LIMITS.users} users, ${GATEWAY_CACHE_LIMITS.membersPerGuild} members and ${GATEWAY_CACHE_LIMITS.messagesPerChannel} messages a channel after ${AUTHORS} people wrote`, async () => {
    const w = h.discord.world;
    const general = w.channels.general;
    const first = h.discord.sendMessage({ author: w.users.bob, channel: general, content: `${mention(h.discord)} first question` });
    const answer = await answerTo(first, /first question/);
    // Chatter the bot is not asked about, from as many people (a busy server over days).
    for (let i = 0; i < AUTHORS; i++) {
      h.discord.sendMessage({ author: someone(i), channel: general, content: `chatter ${i}` });
      if (i % 100 === 99) await new Promise((r) => setTimeout(r, 20));
    }
    // Messages of a channel are handled in order: once this is answered, the chatter was seen.
    const last = h.discord.sendMessage({ author: someone(AUTHORS), channel: general, content: `${mention(h.discord)} last question` });
    await answerTo(last, /last question/);

    const guild = client.guilds.cache.get(w.guildId)!;
    expect(client.users.cache.size).toBeLessThanOrEqual(GATEWAY_CACHE_LIMITS.users + 1);
    expect(guild.members.cache.size).toBeLessThanOrEqual(GATEWAY_CACHE_LIMITS.membersPerGuild + 1);
    const channel = client.channels.cache.get(general.id) as unknown as { messages: { cache: Map<string, unknown> } };
    expect(channel.messages.cache.size).toBeLessThanOrEqual(GATEWAY_CACHE_LIMITS.messagesPerChannel);
    // The bot's own user and member stay: its permissions in a channel are read from them.
    expect(client.users.cache.has(w.bot.id)).toBe(true);
    expect(guild.members.me).toBeTruthy();

    // A reply (without a ping) to the bot's first answer, long out of the cache: still a
    // reply to the bot (looked up over REST), so still answered without a mention.
    expect(channel.messages.cache.has(String(answer.id))).toBe(false);
    const followUp = h.discord.sendMessage({ author: w.users.bob, channel: general, content: 'and a follow-up', replyTo: String(answer.id), pingReply: false });
    await answerTo(followUp, /follow-up/);
  }, 120_000);

  it('drops DM channels idle for an hour, and answers their people as before when they write again', async () => {
    const w = h.discord.world;
    const dms = Array.from({ length: 100 }, (_, i): EmuChannel => {
      const channel: EmuChannel = { id: String(960_000_000_000_000_001n + BigInt(i)), type: 1, recipientId: someone(i).id };
      (w.channels as Record<string, EmuChannel>)[`soakDm${i}`] = channel;
      return channel;
    });
    const dmCount = () => [...client.channels.cache.values()].filter((c) => c.type === ChannelType.DM).length;
    const asked = dms.map((channel, i) => h.discord.sendMessage({ author: someone(i), channel, content: `dm question ${i}` }));
    for (const [i, m] of asked.entries()) await answerTo(m, new RegExp(`dm question ${i}\\b`));
    // discord.js keeps a DM channel for everyone who ever wrote, and has no sweeper for them.
    expect(dmCount()).toBeGreaterThanOrEqual(dms.length);

    // The sweep the gateway client runs every 15 minutes, as it would run two hours later.
    const twoHoursLater = () => Date.now() + 2 * 3_600_000;
    sweepIdleDirectMessages(client, { ...GATEWAY_CACHE_LIMITS, messageSweepSeconds: 0.05 }, twoHoursLater);
    await until(() => dmCount() === 0, 'DM channels swept', 5_000);

    const again = h.discord.sendMessage({ author: someone(7), channel: dms[7]!, content: 'dm question again' });
    await answerTo(again, /dm question again/);
  }, 120_000);
});
