import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mention, startTwoShardBridge, until, type DiscordHarness } from './harness.js';
import { shardOf } from '../emulators/discord/world.js';
import { ASK_ANSWERS } from '../../adapters/discord/commands/ask-agent.js';

/**
 * One process running every shard (DISCORD_SHARD_COUNT unset: Discord's recommended count, 2
 * here). Discord sends a guild's events only on shard `(guild_id >> 22) % 2` and DMs only on
 * shard 0: mentions, threads, "Ask the agent" and `/agent` are answered from either shard.
 */
let h: DiscordHarness;
beforeAll(async () => {
  h = await startTwoShardBridge();
});
afterAll(async () => h?.close());

const w = () => h.discord.world;

describe('a bridge running two shards', () => {
  it('answers mentions, threads and "Ask the agent" in a guild on shard 1, and DMs on shard 0', async () => {
    const onShard1 = w().extraGuilds.find((g) => shardOf(g.id, 2) === 1)!;
    const mentioned = h.discord.sendMessage({ author: w().users.alice, channel: onShard1.channel, content: `${mention(h.discord)} hello from shard 1` });
    const thread = h.discord.createThread(onShard1.channel, 'shard 1 thread');
    const inThread = h.discord.sendMessage({ author: w().users.alice, channel: thread, content: `${mention(h.discord)} hello from a thread on shard 1` });
    const dm = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.dmBob, content: 'hello in a DM (shard 0)' });
    for (const m of [mentioned, inThread, dm]) {
      await h.discord.waitFor(() => h.discord.repliesTo(m.id)[0], `the answer to "${m.content}"`, 20_000);
    }
    // The emulator sent them on shard 1 (the guild's) and shard 0 (the DM) only.
    const shards = new Set(h.discord.gatewayStats.dispatched.filter((d) => d.t === 'MESSAGE_CREATE').map((d) => d.shard));
    expect([...shards].sort()).toEqual([0, 1]);

    const target = h.discord.sendMessage({ author: w().users.bob, channel: onShard1.channel, content: 'what is on shard 1?' });
    const ask = h.discord.runMessageCommand({ user: w().users.alice, channel: onShard1.channel, target });
    expect(await h.discord.waitFor(() => ask.original?.content as string | undefined, 'the ask answer')).toBe(ASK_ANSWERS.queued('demo-helper'));
    await h.discord.waitFor(() => h.discord.repliesTo(target.id)[0], 'the asked message answered');

    const help = h.discord.runCommand({ user: w().users.alice, channel: onShard1.channel, subcommand: 'help' });
    await until(() => help.responses.find((r) => r.kind === 'callback'), '/agent help answered on shard 1');
    for (const m of [mentioned, inThread, dm, target]) expect(h.discord.repliesTo(m.id)).toHaveLength(1);
  });

  it('resumes a dropped shard on resume_gateway_url, as Discord asks, and answers what was sent meanwhile once', async () => {
    const onShard1 = w().extraGuilds.find((g) => shardOf(g.id, 2) === 1)!;
    const before = h.discord.gatewayStats.resumeLog.length;
    h.discord.dropConnection(1);
    const m = h.discord.sendMessage({ author: w().users.alice, channel: onShard1.channel, content: `${mention(h.discord)} while shard 1 is away` });
    await until(() => h.discord.gatewayStats.resumeLog.length > before, 'shard 1 resumed', 20_000);
    expect(h.discord.gatewayStats.resumeLog.slice(before)).toEqual([expect.objectContaining({ shard: 1, onResumeUrl: true })]);
    await h.discord.waitFor(() => h.discord.repliesTo(m.id)[0], 'the message sent meanwhile answered');
    await new Promise((r) => setTimeout(r, 300));
    expect(h.discord.repliesTo(m.id)).toHaveLength(1);
  });
});
