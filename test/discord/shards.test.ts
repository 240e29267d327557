import { spawn, type ChildProcess } from 'node:child_process';
import { discordConfigOf } from '../../adapters/discord/config.js';
import { loadTestConfig } from '../support/config.js';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFeedbackStore } from '../../src/feedback/index.js';
import { startBridge, type Bridge } from '../../src/app.js';

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
 * Issue 17, Discord across processes: two ingress processes own shards 0-1 and 2-3 of 4: this
 * test process (ROLE=all, so it also runs the worker) and a child process (ROLE=ingress), sharing
 * Redis and the queue. Guild events reach
 * only the owner of their shard, every message is answered once, commands are registered once,
 * identifies follow max_concurrency across both, and a dropped shard resumes alone.
 */
const SHARDS = 4;
const prefix = `dshard-${randomUUID().slice(0, 8)}`;
let discord: DiscordEmulator;
let agent: AgentEmulator;
let local: { bridge: Bridge; adapter: DiscordAdapter; logs: LogCapture } | undefined;
let child: { process: ChildProcess; port: number; stdout: () => string } | undefined;

function sharedEnv(): Record<string, string> {
  const bindings = discord.world.extraGuilds.map((g) => `discord:${g.channel.id}=demo-helper`).join(',');
  return {
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
  };
}

async function startLocal(env: Record<string, string>) {
  const logs = new LogCapture();
  const secrets = new SecretRegistry();
  const config = loadTestConfig({ ...sharedEnv(), ...env });
  let adapter: DiscordAdapter | undefined;
  const bridge = await startBridge({
    config,
    secrets,
    logger: createLogger({ level: config.logLevel, registry: secrets, destination: logs }),
    metrics: new Metrics(),
    platforms: [{ ...discordPlatform, createAdapter: (ctx) => (adapter = createDiscordAdapter(ctx)) }],
  });
  local = { bridge, adapter: adapter!, logs };
}

const ENTRY = fileURLToPath(new URL('./ingress-process.ts', import.meta.url));

/** A separate Node process running the bridge as a Discord ingress; resolves once it is ready. */
async function startChild(env: Record<string, string>) {
  const proc = spawn(process.execPath, ['--import', 'tsx', ENTRY], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...sharedEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`ingress process did not start: ${err}`)), 25_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /^ready (\d+)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    proc.once('exit', (code) => reject(new Error(`ingress process exited (${code}): ${err}`)));
  });
  child = { process: proc, port, stdout: () => out };
}

beforeAll(async () => {
  agent = await startAgentEmulator({ reply: (instanceId, message) => `echo(${instanceId}): ${message}` });
  discord = await startDiscordEmulator({ extraGuilds: SHARDS, recommendedShards: SHARDS, maxConcurrency: 2 });
  // Both start at once, as two machines would: the Redis-shared throttler must pace them.
  await Promise.all([
    startLocal({ ROLE: 'all', DISCORD_SHARD_IDS: '0-1', DISCORD_SHARD_COUNT: String(SHARDS) }),
    startChild({ ROLE: 'ingress', DISCORD_SHARD_IDS: '2,3', DISCORD_SHARD_COUNT: 'auto' }),
  ]);
}, 40_000);
afterAll(async () => {
  if (child && child.process.exitCode === null) {
    const exited = new Promise((resolve) => child!.process.once('exit', resolve));
    child.process.kill('SIGTERM');
    await exited;
  }
  await local?.bridge.stop();
  await Promise.allSettled([discord?.close(), agent?.close()]);
  await deleteKeys(prefix);
});

const w = () => discord.world;
const mention = () => `<@${w().bot.id}>`;
/** This process (shards 0-1), and the child process (shards 2-3). */
const low = () => local!;
const high = () => child!;
const childUrl = (path: string) => `http://127.0.0.1:${high().port}${path}`;

describe('Discord sharded over two ingress processes', () => {
  it('identifies every shard once, each process its own, within max_concurrency per 5 s', () => {
    const log = discord.gatewayStats.identifyLog;
    expect(log.map((l) => l.shard).sort()).toEqual([0, 1, 2, 3]);
    expect(log.every((l) => l.shardCount === SHARDS)).toBe(true);
    expect(low().adapter.shardPlan).toEqual({ ids: [0, 1], count: SHARDS });
    // Shards 0 and 2 share rate-limit key 0 (shard % max_concurrency), 1 and 3 key 1.
    for (const key of [0, 1]) {
      const times = log.filter((l) => l.shard % 2 === key).map((l) => l.at).sort((a, b) => a - b);
      // Without the shared throttler both processes identify at once (a gap of a few ms).
      expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(IDENTIFY_WINDOW_MS - 500);
    }
  });

  it('registers the commands once, from the process holding shard 0', async () => {
    await low().adapter.commandRegistration;
    const puts = discord.calls.filter((c) => c.method === 'PUT' && c.path.endsWith('/commands'));
    expect(puts).toHaveLength(1);
    // The child's log lines are written asynchronously: wait for the line rather than read once.
    await expect.poll(() => high().stdout()).toContain('discord commands left to the process holding shard 0');
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

    // Guild k lives on shard k: only its owner knows it and handled its message (this process
    // also runs the worker, so only its gateway's "message handled" lines count).
    const handled = (text: string) =>
      text
        .split('\n')
        .filter((l) => l.includes('discord message handled'))
        .map((l) => (JSON.parse(l) as Json).messageId as string)
        // The bot's own replies come back over the gateway of the same shard too.
        .filter((id) => sent.some((m) => m.id === id));
    await expect.poll(() => handled(high().stdout()).length).toBe(2);
    const dm = sent.at(-1)!.id;
    expect(handled(low().logs.text).sort()).toEqual([sent[0]!.id, sent[1]!.id, dm].sort());
    expect(handled(high().stdout()).sort()).toEqual([sent[2]!.id, sent[3]!.id].sort());
    for (const [k, g] of w().extraGuilds.entries()) {
      expect(shardOf(g.id, SHARDS)).toBe(k);
      expect(low().adapter.client?.guilds.cache.has(g.id)).toBe(k < 2);
    }
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

    await expect.poll(async () => (await fetch(childUrl('/readyz'))).status).toBe(200);
    const body = (await (await fetch(childUrl('/readyz'))).json()) as Json;
    expect(body.discord).toEqual({ status: 'ok', shards: { '2': 'up', '3': 'up' } });
    const childMetrics = await (await fetch(childUrl('/metrics'))).text();
    expect(childMetrics).toMatch(/agent_bridge_discord_shard_up\{shard="3"\} 1/);
    expect(childMetrics).not.toMatch(/shard="0"/);
    const metrics = await (await fetch(`http://127.0.0.1:${low().bridge.httpPort}/metrics`)).text();
    expect(metrics).toMatch(/agent_bridge_discord_shard_up\{shard="0"\} 1/);
    expect(metrics).toMatch(/agent_bridge_discord_shard_up\{shard="1"\} 1/);
    expect(metrics).not.toMatch(/shard="2"/);
  });
});

describe('feedback without a store handed in', () => {
  it('records clicks in the default store over the shared Redis (same keys as the composition root would use)', async () => {
    const g0 = w().extraGuilds[0]!;
    const user = discord.sendMessage({ author: w().users.bob, channel: g0.channel, content: `${mention()} rate me` });
    await discord.waitFor(() => discord.repliesTo(user.id)[0], 'answer');
    const target = { channelId: g0.channel.id, messageId: user.id, replyKey: 'rated' };
    await low().bridge.ports.discord!.postChunk(target, 'rated reply', 0, { messageId: 'rated', total: 1, mayExist: false, agentMessageId: 'msg_77' });
    const posted = discord.botMessages(g0.channel.id).at(-1)!;
    const click = discord.clickButton({ user: w().users.bob, channel: g0.channel, message: posted, customId: posted.components[0].components[1].custom_id });
    await discord.waitFor(() => click.original?.content, 'thanks');
    const redis = new Redis('redis://127.0.0.1:6379');
    try {
      const store = createFeedbackStore({ redis, prefix: `${prefix}:chat` });
      await expect.poll(async () => (await store.summary({ instanceIds: ['demo-helper'] }))[0]?.negative).toBe(1);
    } finally {
      redis.disconnect();
    }
  });
});

describe('shard settings', () => {
  it('refuses shard IDs beyond the count, naming both settings', () => {
    expect(() => loadTestConfig({ AGENT_API_BASE_URL: 'http://x', AGENT_API_KEY: 'k', DISCORD_TOKEN: 't', DISCORD_SHARD_IDS: '0-4', DISCORD_SHARD_COUNT: '4' })).toThrow(
      /DISCORD_SHARD_IDS lists shard 4 but DISCORD_SHARD_COUNT is 4/,
    );
    expect(() => loadTestConfig({ AGENT_API_BASE_URL: 'http://x', AGENT_API_KEY: 'k', DISCORD_TOKEN: 't', DISCORD_SHARD_IDS: 'two' })).toThrow(
      /DISCORD_SHARD_IDS must list shard numbers or ranges/,
    );
    const c = loadTestConfig({ AGENT_API_BASE_URL: 'http://x', AGENT_API_KEY: 'k', DISCORD_TOKEN: 't', DISCORD_SHARD_IDS: '0-1,3', DISCORD_SHARD_COUNT: '4' });
    expect(discordConfigOf(c)?.shards).toEqual({ ids: [0, 1, 3], count: 4 });
    expect(discordConfigOf(loadTestConfig({ AGENT_API_BASE_URL: 'http://x', AGENT_API_KEY: 'k', DISCORD_TOKEN: 't' }))?.shards).toEqual({ count: 'auto' });
  });
});
