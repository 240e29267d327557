import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mention, startTwoShardBridge, until, type DiscordHarness } from './harness.js';
import { shardOf } from '../emulators/discord/world.js';

/**
 * The Message Content intent is turned off in the portal while the bridge runs two shards. When
 * shard 0 next IDENTIFYs it is refused (4014) and the adapter reconnects without the intent,
 * replacing its client. discord.js's `destroy()` closed shard 1 too with 1000, which ends its
 * session on Discord: a message sent to shard 1 before the new client's READY went nowhere. Now
 * the old client's sessions are left resumable and caught up on, so it is answered once.
 */
let h: DiscordHarness;
beforeAll(async () => {
  h = await startTwoShardBridge();
});
afterAll(async () => h?.close());

describe('the Message Content intent revoked while two shards run', () => {
  it('answers once a message sent to the other shard while the client was replaced', async () => {
    const w = h.discord.world;
    const onShard1 = w.extraGuilds.find((g) => shardOf(g.id, 2) === 1)!;
    h.discord.setAllowMessageContent(false);
    h.discord.invalidateSession(0, false);
    // Shard 1 of the old client closed, the new client not yet connected.
    await h.discord.waitFor(() => h.discord.gatewayStats.closes.includes(4014) && !h.discord.connectedShards.includes(1), 'the old client closed', 20_000);
    const m = h.discord.sendMessage({ author: w.users.alice, channel: onShard1.channel, content: `${mention(h.discord)} sent while the client is replaced` });
    await until(() => h.adapter.mentionOnly && h.adapter.client?.isReady(), 'reconnected without the intent', 20_000);
    const reply = await h.discord.waitFor(() => h.discord.repliesTo(m.id)[0], 'the message answered', 20_000);
    expect(reply.content).toBe('echo: sent while the client is replaced');
    await new Promise((r) => setTimeout(r, 500));
    expect(h.discord.repliesTo(m.id)).toHaveLength(1);
  }, 45_000);
});
