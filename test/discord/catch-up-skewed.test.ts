import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { startAgentEmulator } from '../../src/demo/agent-emulator.js';
import { sessionsKey } from '../../adapters/discord/gateway-sessions.js';
import { discordPlatform } from '../../adapters/discord/index.js';
import { startDiscordEmulator } from '../emulators/discord/index.js';
import { newPrefix, startTestBridge, type TestBridge } from '../support/bridge-harness.js';
import { discordEnv } from '../support/platform-env.js';
import { SHARED_REDIS } from '../support/redis-cleanup.js';
import { until } from '../support/until.js';

/**
 * An ingress took over the shard of one that crashed, on a machine whose clock is 5 min ahead of
 * the crashed one's (a VM resumed from pause, a host without NTP). Before, at its READY it took
 * the crashed process's session record, written seconds ago, for one over 3 min old (its own
 * clock against the writer's), dropped it and never caught up: the message sent while no process
 * was connected was never answered. Now the record's age is Redis's clock against Redis's stamp.
 */
const FIVE_MINUTES = 5 * 60_000;
let second: TestBridge | undefined;
const redis = new Redis(SHARED_REDIS);
afterEach(async () => {
  vi.restoreAllMocks();
  await second?.close();
  second = undefined;
});
afterAll(() => redis.disconnect());

describe('a catch-up after a crash, on an ingress whose clock is 5 min ahead', () => {
  it('resumes the crashed session: the message sent while no process was connected is answered once', async () => {
    const prefix = newPrefix('dskew');
    const agent = await startAgentEmulator({ reply: (_id, message) => `echo: ${message}` });
    // The emulator shares this process's clock, which the test moves 5 min ahead: its resume
    // window (2 min by default) is made longer than that, so only the bridge feels the skew.
    const discord = await startDiscordEmulator({ resumeWindowMs: 2 * FIVE_MINUTES });
    const env = discordEnv(discord, agent);
    const first = await startTestBridge({ prefix, agent: { ...agent, close: async () => {} } as typeof agent, env, platforms: [discordPlatform] });
    await until(() => discord.gatewayConnected, 'the first run connected');
    await first.bridge.stop();
    // As a crash leaves it: the last renewal, not marked stopped (the next process waits until
    // it stays unrenewed, then RESUMEs it).
    const key = sessionsKey(prefix, 0, 1);
    const records = await redis.hgetall(key);
    expect(Object.keys(records)).toHaveLength(1);
    for (const [id, raw] of Object.entries(records)) {
      const crashed = JSON.parse(raw) as Record<string, unknown>;
      delete crashed.stopped;
      await redis.hset(key, id, JSON.stringify(crashed));
    }

    const general = discord.world.channels.general;
    const missed = discord.sendMessage({ author: discord.world.users.bob, channel: general, content: `<@${discord.world.bot.id}> sent while no process was connected` });
    const real = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => real() + FIVE_MINUTES);
    second = await startTestBridge({ prefix, agent, env, platforms: [discordPlatform], closeWith: [discord] });

    const reply = await discord.waitFor(() => discord.repliesTo(missed.id)[0], 'the missed message answered', 30_000);
    expect(reply.content).toContain('echo: sent while no process was connected');
    expect(second.logs.matching(/caught up on the session its previous process left/)).toHaveLength(1);
    expect(discord.gatewayStats.resumeLog).toHaveLength(1);
    expect(discord.repliesTo(missed.id)).toHaveLength(1);
    expect(agent.chatCalls().filter((c) => JSON.stringify(c).includes('sent while no process was connected'))).toHaveLength(1);
  }, 60_000);
});
