import { afterEach, describe, expect, it } from 'vitest';
import { startAgentEmulator } from '../../src/demo/agent-emulator.js';
import { discordPlatform } from '../../adapters/discord/index.js';
import { startDiscordEmulator } from '../emulators/discord/index.js';
import { newPrefix, startTestBridge, type TestBridge } from '../support/bridge-harness.js';
import { discordEnv } from '../support/platform-env.js';
import { until } from '../support/until.js';

/**
 * A restarted bridge RESUMEs the session its previous run left, to get the messages sent while
 * none ran. Discord may answer that RESUME with op 7 (its gateway node restarting just then; op 7
 * is routine on Discord), or with op 9 `d: true` ("may be resumable"). Before, the catch-up then
 * closed with 1000, which ended the very session it was to catch up on (or read op 9 as the end),
 * and gave up: the messages were lost. Now it leaves the session resumable and RESUMEs it again.
 */
let second: TestBridge | undefined;
afterEach(async () => {
  await second?.close();
  second = undefined;
});

describe('a catch-up interrupted', () => {
  it.each(['reconnect', 'invalid-resumable'] as const)('by %s: resumes the previous session again, the message sent while no process ran is answered once', async (answer) => {
    const prefix = newPrefix('dcatchup');
    const agent = await startAgentEmulator({ reply: (_id, message) => `echo: ${message}` });
    const discord = await startDiscordEmulator();
    const env = discordEnv(discord, agent);
    // The first run is only stopped (as a deploy stops it): the emulators and keys outlive it.
    const first = await startTestBridge({ prefix, agent: { ...agent, close: async () => {} } as typeof agent, env, platforms: [discordPlatform] });
    await until(() => discord.gatewayConnected, 'the first run connected');
    await first.bridge.stop();

    const general = discord.world.channels.general;
    const missed = discord.sendMessage({ author: discord.world.users.bob, channel: general, content: `<@${discord.world.bot.id}> sent while the bridge restarts` });
    discord.interruptNextResumes(1, answer);
    second = await startTestBridge({ prefix, agent, env, platforms: [discordPlatform], closeWith: [discord] });

    const reply = await discord.waitFor(() => discord.repliesTo(missed.id)[0], 'the missed message answered', 30_000);
    expect(reply.content).toContain('echo: sent while the bridge restarts');
    await new Promise((r) => setTimeout(r, 1_000));
    expect(discord.repliesTo(missed.id)).toHaveLength(1);
    expect(agent.chatCalls().filter((c) => JSON.stringify(c).includes('sent while the bridge restarts'))).toHaveLength(1);
    expect(second.logs.matching(/caught up on the session its previous process left/)).toHaveLength(1);
    // The RESUME that was answered came on resume_gateway_url, as Discord asks.
    expect(discord.gatewayStats.resumeLog.map((r) => r.onResumeUrl)).toEqual([true]);
    expect(second.logs.matching(/catch-up on the shard's previous session failed/)).toEqual([]);
  }, 60_000);
});
