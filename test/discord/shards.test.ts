import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBridge, type Bridge } from '../../src/app.js';
import { loadConfig } from '../../src/config/load.js';
import { startAgentEmulator, type AgentEmulator } from '../../src/demo/agent-emulator.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import { Metrics } from '../../src/metrics.js';
import { createDiscordAdapter, type DiscordAdapter } from '../../adapters/discord/adapter.js';
import { discordPlatform } from '../../adapters/discord/index.js';
import { IDENTIFY_WINDOW_MS } from '../../adapters/discord/identify-throttler.js';
import { startDiscordEmulator, type DiscordEmulator, type Json } from '../emulators/discord/index.js';
import { shardOf } from '../emulators/discord/world.js';
import { LogCapture } from '../support/pipeline.js';
import { deleteKeys } from '../support/redis-cleanup.js';

/**
 * Issue 17, Discord across processes: two ingress processes (two bridges, each with its own
 * discord.js client, sharing Redis and the queue) own shards 0-1 and 2-3 of 4. Guild events reach
 * only the owner of their shard, every message is answered once, commands are registered once,
 * identifies follow max_concurrency across both, and a dropped shard resumes alone.
 */
const SHARDS = 4;
const prefix = `dshard-${randomUUID().slice(0, 8)}`;
let discord: DiscordEmulator;
let agent: AgentEmulator;
const bridges: Array<{ bridge: Bridge; adapter: DiscordAdapter; logs: LogCapture }> = [];

async function startIngress(env: Record<string, string>) {
  const logs = new LogCapture();
  const secrets = new SecretRegistry();
  const bindings = discord.world.extraGuilds.map((g) => `discord:${g.channel.id}=demo-helper`).join(',');
  const config = loadConfig({
    AGENT_API_BASE_URL: agent.baseUrl,
    AGENT_API_KEY: agent.apiKey,
    DISCORD_TOKEN: discord.token,
    DISCORD_API_URL: discord.apiUrl,
    DISCORD_GUILD_ID: discord.world.guildId,
    QUEUE_PREFIX: prefix,
    HTTP_PORT: '0',
    PLAYGROUND: 'false',
    RETRY_BASE_DELAY_MS: '20',
    BINDINGS: `${bindings},discord:dm=demo-helper`,
    LOG_LEVEL: 'debug',
    ...env,
  });
  let adapter: DiscordAdapter | undefined;
  const bridge = await startBridge({
    config,
    secrets,
    logger: createLogger({ level: config.logLevel, registry: secrets, destination: logs }),
    metrics: new Metrics(),
    platforms: [{ ...discordPlatform, createAdapter: (ctx) => (adapter = createDiscordAdapter(ctx)) }],
  });
  const entry = { bridge, adapter: adapter!, logs };
  bridges.push(entry);
  return entry;
}

beforeAll(async () => {
  agent = await startAgentEmulator({ reply: (instanceId, message) => `echo(${instanceId}): ${message}` });
  discord = await startDiscordEmulator({ extraGuilds: SHARDS, recommendedShards: SHARDS, maxConcurrency: 2 });
  // Both start at once, as two machines would: the Redis-shared throttler must pace them.
  await Promise.all([
    startIngress({ ROLE: 'all', DISCORD_SHARD_IDS: '0-1', DISCORD_SHARD_COUNT: String(SHARDS) }),
    startIngress({ ROLE: 'ingress', DISCORD_SHARD_IDS: '2,3', DISCORD_SHARD_COUNT: 'auto' }),
  ]);
}, 30_000);
afterAll(async () => {
  await Promise.allSettled(bridges.map((b) => b.bridge.stop()));
  await Promise.allSettled([discord?.close(), agent?.close()]);
  await deleteKeys(prefix);
});

const w = () => discord.world;
const mention = () => `<@${w().bot.id}>`;
const owning = (first: number) => bridges.find((b) => b.adapter.shardPlan !== 'auto' && b.adapter.shardPlan?.ids[0] === first)!;
/** The process with shards 0-1, and the one with 2-3. */
const low = () => owning(0);
const high = () => owning(2);

describe('Discord sharded over two ingress processes', () => {
  it('identifies every shard once, each process its own, within max_concurrency per 5 s', () => {
    const log = discord.gatewayStats.identifyLog;
    expect(log.map((l) => l.shard).sort()).toEqual([0, 1, 2, 3]);
    expect(log.every((l) => l.shardCount === SHARDS)).toBe(true);
    expect(low().adapter.shardPlan).toEqual({ ids: [0, 1], count: SHARDS });
    expect(high().adapter.shardPlan).toEqual({ ids: [2, 3], count: SHARDS });
    // Shards 0 and 2 share rate-limit key 0 (shard % max_concurrency), 1 and 3 key 1.
    for (const key of [0, 1]) {
      const times = log.filter((l) => l.shard % 2 === key).map((l) => l.at).sort((a, b) => a - b);
      // Without the shared throttler both processes identify at once (a gap of a few ms).
      expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(IDENTIFY_WINDOW_MS - 500);
    }
  });

  it('registers the commands once, from the process holding shard 0', () => {
    const puts = discord.calls.filter((c) => c.method === 'PUT' && c.path.endsWith('/commands'));
    expect(puts).toHaveLength(1);
    expect(high().logs.text).toContain('discord commands left to the process holding shard 0');
  });

  it('routes each guild to the process owning its shard and answers every message once', async () => {
    const sent: Json[] = [];
    for (const g of w().extraGuilds) {
      sent.push(discord.sendMessage({ author: w().users.alice, channel: g.channel, content: `${mention()} hello from ${g.name}` }));
    }
    sent.push(discord.sendMessage({ author: w().users.bob, channel: w().channels.dmBob, content: 'hello in a DM' }));
    await discord.waitFor(() => sent.every((m) => discord.repliesTo(m.id).length >= 1), 'every message answered');
    for (const m of sent) expect(discord.repliesTo(m.id)).toHaveLength(1);
    expect(agent.chatCalls().filter((c) => c.message.startsWith('hello'))).toHaveLength(sent.length);

    // Guild k lives on shard k: only its owner's client knows it.
    for (const [k, g] of w().extraGuilds.entries()) {
      expect(shardOf(g.id, SHARDS)).toBe(k);
      const owner = k < 2 ? low() : high();
      const other = k < 2 ? high() : low();
      expect(owner.adapter.client?.guilds.cache.has(g.id)).toBe(true);
      expect(other.adapter.client?.guilds.cache.has(g.id)).toBe(false);
    }
    const creates = discord.gatewayStats.dispatched.filter((d) => d.t === 'MESSAGE_CREATE');
    expect(creates.length).toBeGreaterThanOrEqual(sent.length);
    // The DM went to shard 0, in the low process.
    expect(low().logs.text).toContain(sent.at(-1)!.id);
    expect(high().logs.text).not.toContain(sent.at(-1)!.id);
  });

  it('resumes a dropped shard without touching the others, and reports per-shard state', async () => {
    const identifies = discord.gatewayStats.identifies;
    const resumesBefore = discord.gatewayStats.resumeLog.length;
    discord.dropConnection(3);
    await discord.waitFor(() => discord.gatewayStats.resumeLog.length > resumesBefore && discord.connectedShards.length === SHARDS, 'shard 3 resumed');
    expect(discord.gatewayStats.resumeLog.slice(resumesBefore).map((r) => r.shard)).toEqual([3]);
    expect(discord.gatewayStats.identifies).toBe(identifies);

    const g3 = w().extraGuilds[3]!;
    const m = discord.sendMessage({ author: w().users.bob, channel: g3.channel, content: `${mention()} after the resume` });
    await discord.waitFor(() => discord.repliesTo(m.id)[0], 'answer after resume');

    const ready = await fetch(`http://127.0.0.1:${high().bridge.httpPort}/readyz`);
    await expect.poll(async () => (await fetch(`http://127.0.0.1:${high().bridge.httpPort}/readyz`)).status).toBe(200);
    expect(ready.headers.get('content-type')).toMatch(/json/);
    const body = (await (await fetch(`http://127.0.0.1:${high().bridge.httpPort}/readyz`)).json()) as Json;
    expect(body.discord).toEqual({ status: 'ok', shards: { '2': 'up', '3': 'up' } });
    const metrics = await (await fetch(`http://127.0.0.1:${low().bridge.httpPort}/metrics`)).text();
    expect(metrics).toMatch(/agent_bridge_discord_shard_up\{shard="0"\} 1/);
    expect(metrics).toMatch(/agent_bridge_discord_shard_up\{shard="1"\} 1/);
    expect(metrics).not.toMatch(/shard="2"/);
  });
});

describe('shard settings', () => {
  it('refuses shard IDs beyond the count, naming both settings', () => {
    expect(() => loadConfig({ AGENT_API_BASE_URL: 'http://x', AGENT_API_KEY: 'k', DISCORD_TOKEN: 't', DISCORD_SHARD_IDS: '0-4', DISCORD_SHARD_COUNT: '4' })).toThrow(
      /DISCORD_SHARD_IDS lists shard 4 but DISCORD_SHARD_COUNT is 4/,
    );
    expect(() => loadConfig({ AGENT_API_BASE_URL: 'http://x', AGENT_API_KEY: 'k', DISCORD_TOKEN: 't', DISCORD_SHARD_IDS: 'two' })).toThrow(
      /DISCORD_SHARD_IDS must list shard numbers or ranges/,
    );
    const c = loadConfig({ AGENT_API_BASE_URL: 'http://x', AGENT_API_KEY: 'k', DISCORD_TOKEN: 't', DISCORD_SHARD_IDS: '0-1,3', DISCORD_SHARD_COUNT: '4' });
    expect(c.discord?.shards).toEqual({ ids: [0, 1, 3], count: 4 });
    expect(loadConfig({ AGENT_API_BASE_URL: 'http://x', AGENT_API_KEY: 'k', DISCORD_TOKEN: 't' }).discord?.shards).toEqual({ count: 'auto' });
  });
});
