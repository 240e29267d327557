import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordBridge, type DiscordHarness } from './harness.js';
import type { EmuChannel, EmuInteraction } from '../emulators/discord/index.js';

/**
 * An app can also be installed to a user's account (Discord's "Add App"): its global commands
 * then work in any server that user is in, whether the bot was invited there or not, and the
 * interaction carries the user's own permissions in that server. Only a server that installed
 * the app (`authorizing_integration_owners["0"]` = that server) has admins of the bridge.
 */
let h: DiscordHarness;
beforeAll(async () => {
  h = await startDiscordBridge({ session: true });
});
afterAll(async () => {
  await h?.close();
});

const w = () => h.discord.world;
/** A channel of a server the bot was never invited to; the user has Manage Server there (their own). */
const strangerChannel = (): EmuChannel => ({ id: '960000000000000002', type: 0, name: 'stranger-general', guildId: '960000000000000001' });

async function answerOf(i: EmuInteraction, label: string): Promise<string> {
  return h.discord.waitFor(() => (i.original?.content ? i.original.content : undefined), label);
}

describe('/agent from a user-installed app', () => {
  it('refuses admin commands in a server that did not install the app, listing nothing and binding nothing', async () => {
    const channel = strangerChannel();
    const list = h.discord.runCommand({ user: w().users.alice, channel, subcommand: 'instances', installedBy: 'user' });
    const listed = await answerOf(list, 'instances from a user install');
    expect(listed).not.toMatch(/demo-helper|demo-poet/);
    expect(listed).toMatch(/invite|install/i);

    const bind = h.discord.runCommand({ user: w().users.alice, channel, subcommand: 'bind', options: { instance: 'demo-poet' }, installedBy: 'user' });
    expect(await answerOf(bind, 'bind from a user install')).not.toMatch(/Channel bound/);
    expect(await h.bridge.bindings.get('discord', channel.id)).toBeUndefined();

    const credential = h.discord.runCommand({ user: w().users.alice, channel, subcommand: 'credential', options: { instance: 'demo-helper' }, installedBy: 'user' });
    await answerOf(credential, 'credential from a user install');
    expect(credential.responses.some((r) => r.type === 9)).toBe(false);
  });

  it('refuses a credential form submitted from a user install, sending nothing to the agent service', async () => {
    const submit = h.discord.submitModal({
      user: w().users.alice,
      channel: strangerChannel(),
      customId: 'agent:credential:demo-helper',
      fields: { key: 'GITHUB_TOKEN', value: 'planted-by-a-stranger' },
      installedBy: 'user',
    });
    await answerOf(submit, 'credential submit from a user install');
    expect(h.agent.credentials.get('demo-helper')?.get('GITHUB_TOKEN')).toBeUndefined();
  });

  it('offers no instances to autocomplete from a user install', async () => {
    const i = h.discord.autocomplete({ user: w().users.alice, channel: strangerChannel(), subcommand: 'bind', focused: 'instance', options: { instance: '' }, installedBy: 'user' });
    const result = await h.discord.waitFor(() => i.responses.find((r) => r.type === 8), 'autocomplete result');
    expect(result.data.choices).toEqual([]);
  });

  it('still runs them for an admin of a server that installed the app', async () => {
    const guild = h.discord.runCommand({ user: w().users.alice, channel: w().channels.bound, subcommand: 'instances' });
    expect(await answerOf(guild, 'instances from the guild install')).toMatch(/demo-helper/);
  });
});
