import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBridge, type Bridge } from '../../src/app.js';
import { startAgentEmulator, type AgentEmulator } from '../../src/demo/agent-emulator.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import { discordPlatform } from '../../adapters/discord/index.js';
import { startDiscordEmulator, type DiscordEmulator, type Json } from '../emulators/discord/index.js';
import { shardOf } from '../emulators/discord/world.js';
import { startBridgeProcess, type BridgeProcess } from '../support/bridge-process.js';
import { loadTestConfig } from '../support/config.js';
import { newPrefix } from '../support/bridge-harness.js';
import { LogCapture } from '../support/pipeline.js';
import { deleteKeys, SHARED_REDIS } from '../support/redis-cleanup.js';
import { Redis } from 'ioredis';
import { sessionsKey } from '../../adapters/discord/gateway-sessions.js';

/**
 * A Discord ingress process restarted (SIGTERM, as a deploy does) and crashed (SIGKILL): the
 * real entry (`bin/agent-bridge.ts`, ROLE=ingress) on shards 0-1 of 2, a worker in this process.
 * Messages sent while no process holds the shards reach the next process, which RESUMEs the
 * session the one before left and gets them replayed: every message is answered exactly once.
 * Before, the replacement only IDENTIFYed afresh and they were lost without a word.
 */
const SHARDS = 2;
const ENTRY = fileURLToPath(new URL('../../bin/agent-bridge.ts', import.meta.url));
const prefix = newPrefix('drestart');
let discord: DiscordEmulator;
let agent: AgentEmulator;
let worker: Bridge | undefined;
const ingresses: BridgeProcess[] = [];

function env(): Record<string, string> {
  const bindings = discord.world.extraGuilds.map((g) => `discord:${g.channel.id}=demo-helper`).join(',');
  return {
    AGENT_API_BASE_URL: agent.baseUrl,
    AGENT_API_KEY: agent.apiKey,
    DISCORD_TOKEN: discord.token,
    DISCORD_API_URL: discord.apiUrl,
    DISCORD_GUILD_ID: discord.world.guildId,
    DISCORD_SHARD_IDS: '0-1',
    DISCORD_SHARD_COUNT: String(SHARDS),
    REDIS_URL: SHARED_REDIS,
    QUEUE_PREFIX: prefix,
    BINDINGS: bindings,
    RETRY_BASE_DELAY_MS: '20',
    LOG_LEVEL: 'info',
  };
}

async function startIngress(): Promise<BridgeProcess> {
  const p = await startBridgeProcess(ENTRY, { ...env(), ROLE: 'ingress' }, { ready: /"msg":"discord connected"/, what: 'discord ingress', timeoutMs: 40_000 });
  ingresses.push(p);
  return p;
}

async function term(p: BridgeProcess): Promise<void> {
  p.child.kill('SIGTERM');
  const { code } = await p.exited;
  expect(code).toBe(0);
}

beforeAll(async () => {
  agent = await startAgentEmulator({ reply: (_id, message) => `echo: ${message}` });
  // Both shards may identify at once (max_concurrency 2), so a start takes about a second.
  discord = await startDiscordEmulator({ extraGuilds: SHARDS, recommendedShards: SHARDS, maxConcurrency: 2 });
  const config = loadTestConfig({ ...env(), ROLE: 'worker', HTTP_PORT: '0', PLAYGROUND: 'false' });
  const secrets = new SecretRegistry();
  worker = await startBridge({
    config,
    secrets,
    logger: createLogger({ level: 'warn', registry: secrets, destination: new LogCapture() }),
    platforms: [discordPlatform],
  });
}, 30_000);

afterAll(async () => {
  await Promise.all(ingresses.map((p) => p.kill9()));
  await worker?.stop();
  await Promise.allSettled([discord?.close(), agent?.close()]);
  await deleteKeys(prefix);
});

describe('a Discord ingress restart loses nothing of its shards', () => {
  it('answers every message sent while the ingress was stopped (SIGTERM) or killed (SIGKILL) exactly once', async () => {
    const w = discord.world;
    expect(w.extraGuilds.map((g) => shardOf(g.id, SHARDS))).toEqual([0, 1]);
    const sent: Array<{ phase: string; message: Json }> = [];
    const send = (phase: string, perGuild: number) => {
      for (let i = 0; i < perGuild; i++) {
        for (const g of w.extraGuilds) {
          sent.push({ phase, message: discord.sendMessage({ author: w.users.alice, channel: g.channel, content: `<@${w.bot.id}> ${phase} ${i} in ${g.name}` }) });
        }
      }
    };
    /** Waits (at most `ms`) until every message sent so far has an answer. */
    const settle = (ms: number) =>
      discord.waitFor(() => sent.every((s) => discord.repliesTo(s.message.id as string).length > 0), 'every message answered', ms).catch(() => undefined);

    const first = await startIngress();
    send('warm-up', 1);
    await settle(20_000);

    // A deploy: SIGTERM, the process exits, messages come, a replacement starts.
    await term(first);
    send('stopped', 3);
    const starting = startIngress();
    send('starting', 1);
    const second = await starting;
    await settle(30_000);

    // A crash: SIGKILL, messages come, a replacement starts.
    await second.kill9();
    send('killed', 3);
    const third = await startIngress();
    await settle(30_000);
    expect(discord.gatewayStats.resumeLog).toHaveLength(4);

    // A deploy that starts the new process first: while the old one runs, both hold the shards
    // (each message one job), and the new one leaves the old one's sessions alone until it stops.
    const fourth = await startIngress();
    send('overlap', 1);
    await settle(20_000);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(discord.gatewayStats.resumeLog).toHaveLength(4);
    await term(third);
    send('after overlap', 1);
    await settle(20_000);
    await discord.waitFor(() => discord.gatewayStats.resumeLog.length === 6, "the old process's sessions caught up on once it stopped", 20_000);
    // Answers that could still come twice (a replay of what was already stored) come within this.
    await new Promise((r) => setTimeout(r, 1_500));

    const replies = (s: { message: Json }) => discord.repliesTo(s.message.id as string).length;
    const calls = (s: { message: Json }) => agent.chatCalls().filter((c) => c.message === s.message.content.replace(`<@${w.bot.id}> `, '')).length;
    const figures = {
      sent: sent.length,
      answeredOnce: sent.filter((s) => replies(s) === 1).length,
      lost: sent.filter((s) => replies(s) === 0).map((s) => s.phase),
      answeredTwice: sent.filter((s) => replies(s) > 1).length,
      agentCallsNotOne: sent.filter((s) => calls(s) !== 1).length,
      identifies: discord.gatewayStats.identifies,
      resumes: discord.gatewayStats.resumeLog.map((r) => r.shard),
      refusedResumes: discord.gatewayStats.refusedResumes,
    };
    console.info(`shards-restart figures: ${JSON.stringify(figures)}`);
    expect(figures).toMatchObject({ sent: 20, answeredOnce: 20, lost: [], answeredTwice: 0, agentCallsNotOne: 0, refusedResumes: 0 });
    // Each process IDENTIFYs its own session; each successor also RESUMEs its predecessor's two
    // (the fourth once the third stopped).
    expect(figures.identifies).toBe(8);
    expect(figures.resumes.sort()).toEqual([0, 0, 0, 1, 1, 1]);
    const caughtUp = ingresses.slice(1).flatMap((p) => p.output().split('\n').filter((l) => l.includes('caught up on the session')));
    expect(caughtUp).toHaveLength(6);
    // The session IDs are not secrets, but the logs carry none.
    for (const p of ingresses) expect(p.output()).not.toMatch(/session-\d/);

    await term(fourth);
  }, 150_000);

  it('says so when Discord no longer resumes the session left behind (op 9), and drops its record', async () => {
    const key = sessionsKey(prefix, 0, SHARDS);
    const redis = new Redis(SHARED_REDIS);
    try {
      // A session Discord ended (closed with 1000 or past its resume window), recorded as stopped.
      const gone = { sessionId: 'ended-meanwhile', sequence: 5, resumeURL: discord.wsUrl, shardId: 0, shardCount: SHARDS, writtenAt: Date.now(), stopped: true };
      await redis.hset(key, gone.sessionId, JSON.stringify(gone));
      const refused = discord.gatewayStats.refusedResumes;
      const next = await startIngress();
      await discord.waitFor(() => discord.gatewayStats.refusedResumes > refused, 'the RESUME refused', 15_000);
      await expect.poll(() => next.output()).toContain('discord could not resume the session');
      expect(next.output()).not.toContain('ended-meanwhile');
      await expect.poll(() => redis.hexists(key, gone.sessionId)).toBe(0);
      await term(next);
    } finally {
      redis.disconnect();
    }
  }, 60_000);
});
