import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBridge, type Bridge } from '../../src/app.js';
import { startAgentEmulator, type AgentEmulator } from '../../src/demo/agent-emulator.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import { discordPlatform } from '../../adapters/discord/index.js';
import { sessionsKey, type GatewaySession } from '../../adapters/discord/gateway-sessions.js';
import { startDiscordEmulator, type DiscordEmulator, type Json } from '../emulators/discord/index.js';
import { startBridgeProcess, type BridgeProcess } from '../support/bridge-process.js';
import { loadTestConfig } from '../support/config.js';
import { newPrefix } from '../support/bridge-harness.js';
import { HeldCalls } from '../support/held-calls.js';
import { LogCapture } from '../support/pipeline.js';
import { deleteKeys, SHARED_REDIS } from '../support/redis-cleanup.js';
import { until } from '../support/until.js';

/**
 * An ingress process crashed (SIGKILL) after Discord delivered an edit of a waiting question (a
 * PIN taken out) and the deletion of another, before it applied them in Redis. Before, the
 * sequence recorded as handled waited only for MESSAGE_CREATEs: the record was already past the
 * edit and the deletion, the next process's RESUME did not replay them, and the agent was asked
 * the PIN and the deleted question (billed). Now it waits for them as for messages, so they are
 * replayed to the next process and applied. The real entry runs the ingress (ROLE=ingress) in
 * child processes; the worker runs here, its agent call held so the questions wait.
 * The edit's handling is held by the emulator never answering the fetch of the DM channel (the
 * process, started after the question came, does not know that channel: uncached-channel-edit.ts);
 * the deletion waits behind it in the channel's order.
 */
const ENTRY = fileURLToPath(new URL('../../bin/agent-bridge.ts', import.meta.url));
const prefix = newPrefix('dcrashedit');
const held = new HeldCalls();
const redis = new Redis(SHARED_REDIS);
let discord: DiscordEmulator;
let agent: AgentEmulator;
let worker: Bridge | undefined;
const ingresses: BridgeProcess[] = [];

function env(): Record<string, string> {
  return {
    AGENT_API_BASE_URL: agent.baseUrl,
    AGENT_API_KEY: agent.apiKey,
    DISCORD_TOKEN: discord.token,
    DISCORD_API_URL: discord.apiUrl,
    DISCORD_GUILD_ID: discord.world.guildId,
    DISCORD_SHARD_IDS: '0',
    DISCORD_SHARD_COUNT: '1',
    REDIS_URL: SHARED_REDIS,
    QUEUE_PREFIX: prefix,
    BINDINGS: 'discord:dm=demo-helper',
    RETRY_BASE_DELAY_MS: '20',
    LOG_LEVEL: 'debug',
  };
}

async function startIngress(): Promise<BridgeProcess> {
  const p = await startBridgeProcess(ENTRY, { ...env(), ROLE: 'ingress' }, { ready: /"msg":"discord connected"/, what: 'discord ingress', timeoutMs: 40_000 });
  ingresses.push(p);
  return p;
}

/** The JSON log lines of a process whose `msg` matches. */
function logs(p: BridgeProcess, msg: RegExp): Array<Record<string, unknown>> {
  return p
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => msg.test(String(l.msg)));
}

beforeAll(async () => {
  agent = await startAgentEmulator({ reply: held.reply });
  discord = await startDiscordEmulator();
  const config = loadTestConfig({ ...env(), LOG_LEVEL: 'warn', ROLE: 'worker', HTTP_PORT: '0', PLAYGROUND: 'false' });
  const secrets = new SecretRegistry();
  worker = await startBridge({ config, secrets, logger: createLogger({ level: 'warn', registry: secrets, destination: new LogCapture() }), platforms: [discordPlatform] });
}, 30_000);

afterAll(async () => {
  held.release();
  await Promise.all(ingresses.map((p) => p.kill9()));
  await worker?.stop();
  await Promise.allSettled([discord?.close(), agent?.close()]);
  await deleteKeys(prefix);
  redis.disconnect();
});

describe('a Discord ingress crash while an edit or a deletion is being applied', () => {
  it('leaves both to be replayed to the next process, which applies them: the agent gets the edited text, not the deleted question', async () => {
    const w = discord.world;
    const dm = (content: string): Json => discord.sendMessage({ author: w.users.alice, channel: w.channels.dmAlice, content });
    const called = (text: string) => agent.chatCalls().filter((c) => c.message.includes(text)).length;

    // The questions wait behind a held call, queued by a first process that then stops (a deploy).
    const first = await startIngress();
    held.hold();
    const slow = dm('HOLD slow dm');
    await until(() => called('slow dm') === 1, 'the slow call under way');
    const secret = dm('my pin is 4242, is it safe?');
    const gone = dm('and my card number is 5555-1234');
    const queued = (p: BridgeProcess, m: Json) => logs(p, /discord message handled/).some((l) => l.messageId === m.id && l.status === 'queued');
    await until(() => queued(first, secret) && queued(first, gone), 'both queued');
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);

    // The next process holds the shard; it has not seen the DM channel.
    const crashing = await startIngress();
    await until(() => logs(crashing, /caught up on the session its previous process left/).length === 1, 'the first session caught up on');
    discord.store.requestHolds.push(new RegExp(`^GET /channels/${w.channels.dmAlice.id}$`));
    discord.editMessage(secret, 'my pin is [removed], is it safe?');
    discord.deleteMessage(gone);
    await until(() => discord.store.heldRequests.length === 1, 'the edit being applied (its channel fetch held)');
    // A renewal of the record after both came, then the crash.
    const since = Date.now();
    const key = sessionsKey(prefix, 0, 1);
    const renewed = async () => Object.values(await redis.hgetall(key)).some((raw) => (JSON.parse(raw) as GatewaySession).writtenAt > since + 2_100);
    await expect.poll(renewed, { timeout: 15_000, interval: 200 }).toBe(true);
    await crashing.kill9();
    expect(logs(crashing, /was edited|deleted before it was answered/)).toEqual([]);

    const next = await startIngress();
    await until(() => logs(next, /caught up on the session its previous process left/).length === 1, 'the crashed session caught up on', 40_000);
    expect(logs(next, /was edited: the agent will be asked the edited text/).map((l) => l.messageId)).toEqual([secret.id]);
    expect(logs(next, /deleted before it was answered/).map((l) => l.messageId)).toEqual([gone.id]);

    held.release();
    await discord.waitFor(() => discord.repliesTo(String(slow.id))[0], 'the slow one answered', 30_000);
    await discord.waitFor(() => discord.repliesTo(String(secret.id))[0], 'the edited one answered', 30_000);
    const after = dm('one more after the crash');
    await discord.waitFor(() => discord.repliesTo(String(after.id))[0], 'the question after answered', 30_000);
    expect(called('4242')).toBe(0);
    expect(called('5555-1234')).toBe(0);
    expect(discord.repliesTo(String(secret.id)).map((m) => m.content)).toEqual(['echo: my pin is [removed], is it safe?']);
    expect(discord.repliesTo(String(gone.id))).toEqual([]);
    for (const p of ingresses) expect(p.output()).not.toMatch(/4242|5555-1234/);
    next.child.kill('SIGTERM');
    expect((await next.exited).code).toBe(0);
  }, 150_000);
});
