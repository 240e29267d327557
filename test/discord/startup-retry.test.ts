import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createDiscordAdapter, type DiscordAdapter, type StartRetry } from '../../adapters/discord/adapter.js';
import { discordPlatform } from '../../adapters/discord/index.js';
import { startAgentEmulator } from '../../src/demo/agent-emulator.js';
import { SESSION_LIMIT_RECHECK_MS, sessionLimitWaitMs, sessionStartLimitOf } from '../../adapters/discord/session-limit.js';
import { startDiscordEmulator, type DiscordEmulator, type DiscordEmulatorOptions } from '../emulators/discord/index.js';
import { newPrefix, startTestBridge, type TestBridge } from '../support/bridge-harness.js';
import { discordEnv } from '../support/platform-env.js';
import { until } from '../support/until.js';
import { gatewayBot, startClosingGateway, startFrontDoor, type Answer } from './front-door.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The real bridge with Discord only; `env` wins over the emulator's settings. */
async function startBridgeWith(discord: DiscordEmulator, env: Record<string, string>, startRetry: StartRetry) {
  const agent = await startAgentEmulator({ reply: (_id, message) => `echo: ${message}` });
  let adapter: DiscordAdapter | undefined;
  const t = await startTestBridge({
    prefix: newPrefix('dstart'),
    agent,
    env: { ...discordEnv(discord, agent), ...env },
    platforms: [{ ...discordPlatform, createAdapter: (ctx) => (adapter = createDiscordAdapter(ctx, { startRetry })) }],
  });
  cleanups.push(() => t.close());
  return { t, adapter: adapter! };
}

async function emulator(options?: DiscordEmulatorOptions): Promise<DiscordEmulator> {
  const discord = await startDiscordEmulator(options);
  cleanups.push(() => discord.close());
  return discord;
}

async function frontDoor(discord: DiscordEmulator, answer: (method: string, path: string) => Answer) {
  const door = await startFrontDoor(discord.apiUrl, answer);
  cleanups.push(() => door.close());
  return door;
}

async function readyz(t: TestBridge): Promise<{ status: number; discord: unknown }> {
  const res = await fetch(`http://127.0.0.1:${t.bridge.httpPort}/readyz`);
  return { status: res.status, discord: ((await res.json()) as { discord?: unknown }).discord };
}

const warnings = (t: TestBridge, text: string) => t.logs.lines.filter((l) => l.includes(text) && l.includes('"level":40'));

describe('discord start-up while Discord is unreachable', () => {
  it('starts the bridge anyway, reports Discord not ready, retries with backoff and connects once Discord is back', async () => {
    const discord = await emulator();
    let down = true;
    const door = await frontDoor(discord, (method, path) => (down && path === '/gateway/bot' ? { status: 503, body: { message: 'upstream' } } : undefined));
    const { t, adapter } = await startBridgeWith(discord, { DISCORD_API_URL: door.apiUrl }, { firstMs: 200, maxMs: 800 });

    // Up without Discord: the HTTP server answers, and /readyz says why it is not ready.
    expect(adapter.client).toBeUndefined();
    expect(await readyz(t)).toEqual({ status: 503, discord: { status: 'down', shards: {}, connection: 'retrying' } });
    const first = await until(() => warnings(t, 'Discord answered 503')[0], 'a warning naming Discord');
    expect(first).toMatch(/Discord answered 503 \(Service Unavailable\); Discord connect retried in 0\.2 s/);
    await until(() => warnings(t, 'Discord answered 503').length >= 3, 'three warnings');
    // Doubling, capped.
    const delays = warnings(t, 'Discord answered 503').map((l) => (JSON.parse(l) as { retryInMs: number }).retryInMs);
    expect(delays.slice(0, 3)).toEqual([200, 400, 800]);

    down = false;
    await until(() => adapter.client?.isReady(), 'connected after the outage', 15_000);
    expect((await readyz(t)).discord).toEqual({ status: 'ok', shards: { 0: 'up' } });
    const m = discord.sendMessage({ author: discord.world.users.alice, channel: discord.world.channels.general, content: `<@${discord.world.bot.id}> back?` });
    expect((await discord.waitFor(() => discord.repliesTo(m.id)[0], 'reply after the outage')).content).toBe('echo: back?');
  });

  it('a 429 without Retry-After (Cloudflare, a proxy) is retried with the backoff, not at once (audit I)', async () => {
    const discord = await emulator();
    let limited = true;
    // The front door's 429 has a JSON body but no Retry-After nor X-RateLimit-* header, as none of Discord's own lack.
    const door = await frontDoor(discord, (_method, path) => (limited && path === '/gateway/bot' ? { status: 429, body: { message: 'error code: 1015' } } : undefined));
    const { t, adapter } = await startBridgeWith(discord, { DISCORD_API_URL: door.apiUrl }, { firstMs: 200, maxMs: 400 });
    await until(() => warnings(t, 'without saying how long to wait').length >= 2, 'two warnings');
    // Before: @discordjs/rest sent it again at once, about 50 refused requests a second, and start-up hung.
    expect(door.requests.filter((r) => r === 'GET /gateway/bot').length).toBeLessThanOrEqual(4);
    limited = false;
    await until(() => adapter.client?.isReady(), 'connected once the 429s stop', 15_000);
  });

  it('names DISCORD_API_URL when nothing answers there, and stops retrying at once when the bridge stops', async () => {
    const discord = await emulator();
    const apiUrl = `http://127.0.0.1:${await closedPort()}/api`;
    const { t } = await startBridgeWith(discord, { DISCORD_API_URL: apiUrl }, { firstMs: 30_000, maxMs: 30_000 });
    const warning = await until(() => warnings(t, 'not reachable')[0], 'a warning naming DISCORD_API_URL');
    expect(warning).toContain(`Discord is not reachable at DISCORD_API_URL=${apiUrl} (connect ECONNREFUSED`);
    expect(warning).toContain('check DISCORD_API_URL, or leave it unset');
    expect((await readyz(t)).status).toBe(503);
    const stopAt = Date.now();
    await t.bridge.stop();
    expect(Date.now() - stopAt).toBeLessThan(5_000);
  });
});

describe("discord start-up when the daily session-start limit is used up (session_start_limit.remaining 0)", () => {
  it('starts the bridge anyway, warns once naming the limit and its reset, waits reset_after (not the backoff) and connects after the reset', async () => {
    const discord = await emulator({ sessionStartLimit: { remaining: 0, resetAfterMs: 2_000 } });
    const { t, adapter } = await startBridgeWith(discord, {}, { firstMs: 100, maxMs: 200 });

    // Up without Discord: the HTTP server answers, /readyz says Discord is retrying.
    expect((await fetch(`http://127.0.0.1:${t.bridge.httpPort}/healthz`)).status).toBe(200);
    expect(await readyz(t)).toEqual({ status: 503, discord: { status: 'down', shards: {}, connection: 'retrying' } });
    const warning = await until(() => warnings(t, 'session-start limit')[0], 'a warning naming the session-start limit');
    expect(warning).toMatch(/Discord's daily session-start limit is used up \(0 session starts left today.*\); it resets at \d{4}-\d\d-\d\dT/);
    const { retryInMs } = JSON.parse(warning) as { retryInMs: number };
    // reset_after (2 s) and a margin, not the 100 ms backoff that would spend the wait hammering Discord.
    expect(retryInMs).toBeGreaterThanOrEqual(2_000);
    expect(retryInMs).toBeLessThanOrEqual(3_500);
    expect(discord.gatewayStats.connections).toBe(0);

    // Discord resets the count; the next attempt connects.
    discord.setSessionStartLimit({ remaining: 1000 });
    await until(() => adapter.client?.isReady(), 'connected after the reset', 15_000);
    expect((await readyz(t)).discord).toEqual({ status: 'ok', shards: { 0: 'up' } });
    expect(warnings(t, 'session-start limit')).toHaveLength(1);
    // One attempt before the reset, one after: no attempts in between.
    expect(discord.calls.filter((c) => c.path === '/gateway/bot').length).toBeLessThanOrEqual(3);
    const m = discord.sendMessage({ author: discord.world.users.alice, channel: discord.world.channels.general, content: `<@${discord.world.bot.id}> there?` });
    expect((await discord.waitFor(() => discord.repliesTo(m.id)[0], 'reply after the reset')).content).toBe('echo: there?');
  });

  it("reads discord.js's refusal, and re-checks at least every 5 minutes however far the reset is", () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    const limit = sessionStartLimitOf(new Error('Not enough sessions remaining to spawn 2 shards; only 1 remaining; resets at 2026-01-01T20:00:00.000Z'));
    expect(limit?.remaining).toBe(1);
    expect(limit?.resetsAt?.toISOString()).toBe('2026-01-01T20:00:00.000Z');
    expect(sessionLimitWaitMs(limit!, now)).toBe(SESSION_LIMIT_RECHECK_MS);
    expect(sessionLimitWaitMs(limit!, Date.parse('2026-01-01T19:59:50Z'))).toBe(11_000);
    expect(sessionStartLimitOf(new Error('connect ECONNREFUSED'))).toBeUndefined();
  });
});

describe('discord command registration rate-limited (429 on the commands PUT)', () => {
  const commandPuts = (discord: DiscordEmulator) => discord.calls.filter((c) => c.method === 'PUT' && c.path.endsWith('/commands'));

  it('does not hold start-up for a long retry_after, and stopping does not wait for it either', async () => {
    const discord = await emulator();
    discord.failNextCommandPuts(1, { status: 429, retryAfterSeconds: 60 });
    const startedAt = Date.now();
    const { t, adapter } = await startBridgeWith(discord, {}, { firstMs: 200, maxMs: 800 });
    // Before: start-up waited out the 60 s (no "started" line), and a SIGTERM with it.
    expect(Date.now() - startedAt).toBeLessThan(10_000);
    expect(t.logs.text).toContain('agent-bridge started');
    await until(() => commandPuts(discord).some((c) => c.status === 429), 'the commands PUT refused with 429');
    // Ready and answering while the registration waits.
    expect((await readyz(t)).status).toBe(200);
    const m = discord.sendMessage({ author: discord.world.users.alice, channel: discord.world.channels.general, content: `<@${discord.world.bot.id}> hi` });
    await discord.waitFor(() => discord.repliesTo(m.id)[0], 'a reply while registration waits');

    const stopAt = Date.now();
    await t.bridge.stop();
    expect(Date.now() - stopAt).toBeLessThan(5_000);
    expect(adapter.client).toBeUndefined();
    expect(commandPuts(discord)).toHaveLength(1);
  });

  it('registers in the background once the retry_after has passed, and logs it', async () => {
    const discord = await emulator();
    discord.failNextCommandPuts(1, { status: 429, retryAfterSeconds: 3 });
    const { t, adapter } = await startBridgeWith(discord, {}, { firstMs: 200, maxMs: 800 });
    // Started before the PUT went through (it waits 3 s).
    expect(commandPuts(discord).filter((c) => c.status === 200)).toEqual([]);
    await adapter.commandRegistration;
    expect(commandPuts(discord).map((c) => c.status)).toEqual([429, 200]);
    expect(discord.store.commands.get(discord.world.guildId)?.map((c) => c.name)).toEqual(['agent', 'Ask the agent']);
    expect(t.logs.text).toContain('discord /agent command registered');
  });
});

describe('discord start-up failures that no retry can fix stop start-up at once, naming the setting', () => {
  it('a token Discord refuses (401) names DISCORD_TOKEN and where to copy it from', async () => {
    const discord = await emulator();
    const startedAt = Date.now();
    await expect(startBridgeWith(discord, { DISCORD_TOKEN: 'not-the-bot-token' }, { firstMs: 200, maxMs: 800 })).rejects.toThrow(
      /^Discord did not accept DISCORD_TOKEN \(An invalid token was provided\.\): copy the bot token from the Discord Developer Portal/,
    );
    expect(Date.now() - startedAt).toBeLessThan(10_000);
    expect(discord.calls.filter((c) => c.path === '/gateway/bot').map((c) => c.status)).toEqual([401]);
  });

  it.each([
    [4011, /^Discord requires more shards for this bot \(gateway close 4011, sharding is required\): set DISCORD_SHARD_COUNT/],
    [4004, /^Discord did not accept DISCORD_TOKEN \(gateway close 4004, authentication failed\): copy the bot token/],
    [4013, /^Discord refused the gateway intents \(close 4013, invalid intents\)/],
  ])('gateway close %i', async (code, message) => {
    const discord = await emulator();
    const gateway = await startClosingGateway(code);
    cleanups.push(() => gateway.close());
    const door = await frontDoor(discord, (_m, path) => (path === '/gateway/bot' ? gatewayBot(gateway.url) : undefined));
    await expect(startBridgeWith(discord, { DISCORD_API_URL: door.apiUrl }, { firstMs: 200, maxMs: 800 })).rejects.toThrow(message);
    expect(door.requests.filter((r) => r === 'GET /gateway/bot')).toHaveLength(1);
  });
});

/** A port nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
