import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createDiscordAdapter } from '../../adapters/discord/adapter.js';
import { discordPlatform } from '../../adapters/discord/index.js';
import { agreeShardCount } from '../../adapters/discord/shard-count.js';
import { startAgentEmulator } from '../../src/demo/agent-emulator.js';
import { startDiscordEmulator, type DiscordEmulator, type Json } from '../emulators/discord/index.js';
import { newPrefix, startTestBridge, type TestBridge } from '../support/bridge-harness.js';
import { deleteKeysAt, SHARED_REDIS } from '../support/redis-cleanup.js';

/**
 * Audit F2: processes splitting the shards (DISCORD_SHARD_IDS) with DISCORD_SHARD_COUNT=auto,
 * started while Discord's recommendation changed. Discord routes a guild to every session whose
 * own count maps it there, so with counts 2 and 3 some guilds had no session at all.
 */
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** One ingress process of the fleet (in this process), on the shared prefix. */
async function startProcess(discord: DiscordEmulator, prefix: string, env: Record<string, string>): Promise<TestBridge> {
  const agent = await startAgentEmulator({ reply: (_id, message) => `echo: ${message}` });
  const bindings = discord.world.extraGuilds.map((g) => `discord:${g.channel.id}=demo-helper`).join(',');
  const t = await startTestBridge({
    prefix,
    agent,
    env: { DISCORD_TOKEN: discord.token, DISCORD_API_URL: discord.apiUrl, BINDINGS: bindings, ...env },
    platforms: [{ ...discordPlatform, createAdapter: (ctx) => createDiscordAdapter(ctx) }],
  });
  cleanups.push(() => t.close());
  return t;
}

describe('DISCORD_SHARD_COUNT=auto across processes', () => {
  it("a process started after Discord's recommendation changed uses the count the first one recorded, warns, and every guild is answered", async () => {
    const discord = await startDiscordEmulator({ extraGuilds: 6, recommendedShards: 2 });
    cleanups.push(() => discord.close());
    const prefix = newPrefix('dshardcount');
    await startProcess(discord, prefix, { ROLE: 'all', DISCORD_SHARD_IDS: '0', DISCORD_SHARD_COUNT: 'auto' });
    // The bot joined guilds meanwhile: Discord recommends more shards.
    discord.setRecommendedShards(3);
    const later = await startProcess(discord, prefix, { ROLE: 'ingress', DISCORD_SHARD_IDS: '1', DISCORD_SHARD_COUNT: 'auto' });

    expect(discord.gatewayStats.identifyLog.map((l) => [l.shard, l.shardCount])).toEqual([
      [0, 2],
      [1, 2],
    ]);
    const warning = later.logs.lines.find((l) => l.includes('"level":40') && l.includes('DISCORD_SHARD_COUNT'));
    expect(warning).toContain('Discord now recommends 3 shards, but the processes of this bridge agreed on 2');

    const sent: Json[] = discord.world.extraGuilds.map((g) =>
      discord.sendMessage({ author: discord.world.users.alice, channel: g.channel, content: `<@${discord.world.bot.id}> hi ${g.name}` }),
    );
    await discord.waitFor(() => sent.every((m) => discord.repliesTo(m.id).length >= 1), 'a reply in every guild');
    for (const m of sent) expect(discord.repliesTo(m.id)).toHaveLength(1);
  }, 40_000);
});

describe('agreeShardCount (real Redis)', () => {
  const prefix = newPrefix('dshardcount-unit');
  const redis = new Redis(SHARED_REDIS);
  afterAll(async () => {
    redis.disconnect();
    await deleteKeysAt(SHARED_REDIS, prefix);
  });
  const logged = () => {
    const lines: Array<{ level: string; message: string }> = [];
    const logger = {
      warn: (_o: object, message: string) => void lines.push({ level: 'warn', message }),
      error: (_o: object, message: string) => void lines.push({ level: 'error', message }),
    };
    return { lines, logger: logger as unknown as Parameters<typeof agreeShardCount>[0]['logger'] };
  };

  it('an explicit DISCORD_SHARD_COUNT different from the recorded count is logged as an error naming both, and becomes the record', async () => {
    const key = `${prefix}:explicit:discord:shard-count`;
    const first = logged();
    expect((await agreeShardCount({ redis, key, configured: 'auto', ids: [0], recommended: async () => 2, logger: first.logger })).count).toBe(2);
    expect(first.lines).toEqual([]);
    const explicit = logged();
    expect((await agreeShardCount({ redis, key, configured: 4, ids: [0], recommended: async () => 9, logger: explicit.logger })).count).toBe(4);
    expect(explicit.lines).toEqual([{ level: 'error', message: expect.stringMatching(/DISCORD_SHARD_COUNT is 4 but the other processes of this bridge recorded 2 shards/) }]);
    expect(await redis.get(key)).toBe('4');
    const next = logged();
    expect((await agreeShardCount({ redis, key, configured: 'auto', ids: [1], recommended: async () => 4, logger: next.logger })).count).toBe(4);
    expect(next.lines).toEqual([]);
  });

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('the record is a lease: renewed while a process runs, gone once the fleet stopped, so a later fleet is not bound by it', async () => {
    const key = `${prefix}:lease:discord:shard-count`;
    const first = await agreeShardCount({ redis, key, configured: 'auto', ids: [0], recommended: async () => 2, logger: logged().logger, leaseMs: 300 });
    await sleep(700);
    // Still running: renewed past its 300 ms lease.
    expect(await redis.get(key)).toBe('2');
    first.stopRenewing();
    await sleep(500);
    expect(await redis.get(key)).toBeNull();
    const later = logged();
    const next = await agreeShardCount({ redis, key, configured: 'auto', ids: [0], recommended: async () => 3, logger: later.logger, leaseMs: 300 });
    next.stopRenewing();
    expect(next.count).toBe(3);
    expect(later.lines).toEqual([]);
  });

  it('a recorded count too small for this process\'s DISCORD_SHARD_IDS is another plan\'s: the recommendation is used, with a warning', async () => {
    const key = `${prefix}:plan:discord:shard-count`;
    await redis.set(key, '2', 'PX', 60_000);
    const lines = logged();
    const agreed = await agreeShardCount({ redis, key, configured: 'auto', ids: [0, 1, 2, 3], recommended: async () => 4, logger: lines.logger });
    agreed.stopRenewing();
    // With the recorded 2, start-up would stop: "DISCORD_SHARD_IDS lists shard 3 but the shard count is 2".
    expect(agreed.count).toBe(4);
    expect(await redis.get(key)).toBe('4');
    expect(lines.lines).toEqual([{ level: 'warn', message: expect.stringMatching(/cannot hold DISCORD_SHARD_IDS 0,1,2,3/) }]);
  });
});
