import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordBridge, until, type DiscordHarness } from './harness.js';

/**
 * A shard Discord closes for good while the bridge runs (here 4004: the token was reset in the
 * portal) receives nothing until a restart. /readyz said only `"0": "down"`, as for a shard that
 * is merely reconnecting; the operator looking there (or at an orchestrator's probe) now reads
 * what to fix, without the token.
 */
const OLD_TOKEN = 'emulator-bot-token-readyz-before-5d2e';
const NEW_TOKEN = 'emulator-bot-token-readyz-after-81c4';

let h: DiscordHarness;
beforeAll(async () => {
  h = await startDiscordBridge({ emulator: { token: OLD_TOKEN } });
});
afterAll(async () => h?.close());

async function readyz(): Promise<{ status: number; body: string; discord: Record<string, unknown> }> {
  const res = await fetch(`http://127.0.0.1:${h.bridge.httpPort}/readyz`);
  const body = await res.text();
  return { status: res.status, body, discord: (JSON.parse(body) as { discord: Record<string, unknown> }).discord };
}

describe('/readyz for a shard Discord closed for good', () => {
  it('is not ready and names what to fix for that shard, never the token', async () => {
    expect((await readyz()).status).toBe(200);
    h.discord.resetToken(NEW_TOKEN);
    await until(() => h.logs.matching(/discord gateway closed for good/)[0], 'the gateway closes for good', 30_000);

    const r = await readyz();
    expect(r.status).toBe(503);
    expect(r.discord).toMatchObject({ status: 'down', shards: { 0: 'down' }, closedForGood: { 0: expect.stringContaining('DISCORD_TOKEN') } });
    expect(r.body).toContain('4004');
    expect(r.body).not.toContain(OLD_TOKEN);
    expect(r.body).not.toContain(NEW_TOKEN);
  });
});
