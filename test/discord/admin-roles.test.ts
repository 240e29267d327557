import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordBridge, type DiscordHarness } from './harness.js';
import type { EmuInteraction } from '../emulators/discord/index.js';

/**
 * A server's @everyone role has the server's own ID, and discord.js counts it among every
 * member's roles. DISCORD_ADMIN_ROLE_IDS holding it (the server ID pasted for a role ID, or
 * "Copy Role ID" on @everyone) must not make every member an admin.
 */
let h: DiscordHarness;
beforeAll(async () => {
  h = await startDiscordBridge({ env: { DISCORD_ADMIN_ROLE_IDS: '900000000000000001,900000000000000050' } });
});
afterAll(async () => {
  await h?.close();
});

const w = () => h.discord.world;
async function answerOf(i: EmuInteraction, label: string): Promise<string> {
  return h.discord.waitFor(() => (i.original?.content ? i.original.content : undefined), label);
}

describe('DISCORD_ADMIN_ROLE_IDS holding the @everyone role', () => {
  it('makes no plain member an admin', async () => {
    expect(w().guildId).toBe('900000000000000001');
    const i = h.discord.runCommand({ user: w().users.bob, channel: w().channels.bound, subcommand: 'instances' });
    const text = await answerOf(i, 'instances by a plain member');
    expect(text).toMatch(/only admins/i);
    expect(text).not.toMatch(/demo-helper/);
  });

  it('still counts the other roles listed', async () => {
    const i = h.discord.runCommand({ user: w().users.carol, channel: w().channels.bound, subcommand: 'instances' });
    expect(await answerOf(i, 'instances by a role admin')).toMatch(/demo-helper/);
  });
});
