import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mention, startDiscordBridge, until, type DiscordHarness } from './harness.js';

/**
 * Discord's gateway unreachable while the bridge runs (REST still answers). discord.js tries again
 * 500 ms after each failed connection, without backoff, and the adapter logged "discord gateway
 * reconnecting" for each: two lines a second per shard for the whole outage, burying the rest.
 * Now: one line when it starts, a warning at intervals saying for how long, one when it is back.
 */
let h: DiscordHarness;
beforeAll(async () => {
  h = await startDiscordBridge({ env: { LOG_LEVEL: 'info' }, stillDownEveryMs: 2_000 });
});
afterAll(async () => h?.close());

describe('the gateway unreachable for a few seconds', () => {
  it('logs the start, a warning while it lasts and the return, not a line per attempt; then answers again', async () => {
    const before = h.discord.gatewayStats.connections;
    h.discord.setGatewayReachable(false);
    await new Promise((r) => setTimeout(r, 4_500));
    // discord.js did keep trying (several connections refused meanwhile).
    expect(h.discord.gatewayStats.connections - before).toBeGreaterThanOrEqual(5);
    expect(h.logs.matching(/^discord gateway reconnecting$/)).toHaveLength(1);
    const still = h.logs.matching(/still reconnecting/);
    expect(still.length).toBeGreaterThanOrEqual(1);
    expect(still.length).toBeLessThanOrEqual(2);
    expect(still[0]).toMatchObject({ level: 40, shardId: 0, attempts: expect.any(Number), downForMs: expect.any(Number) });

    h.discord.setGatewayReachable(true);
    await until(() => h.logs.matching(/discord gateway shard back/)[0], 'the shard back', 20_000);
    await until(() => h.adapter.readiness().ok, 'ready again');
    const m = h.discord.sendMessage({ author: h.discord.world.users.alice, channel: h.discord.world.channels.general, content: `${mention(h.discord)} after the outage` });
    await h.discord.waitFor(() => h.discord.repliesTo(m.id)[0], 'answered after the outage');
  }, 40_000);
});
