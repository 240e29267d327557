import { describe, expect, it } from 'vitest';
import { openForAll } from '../support/open-for-all.js';
import { startDiscordBridge, type DiscordHarness } from './harness.js';
import type { EmuChannel, EmuInteraction, EmuUser } from '../emulators/discord/index.js';

const EPHEMERAL = 64;

/** The private answer once it is complete: the original response, edited if it was deferred. */
function answerOf(h: DiscordHarness, i: EmuInteraction, label: string): Promise<string> {
  return h.discord.waitFor(() => (i.original?.content ? i.original.content : undefined), label);
}

function run(h: DiscordHarness, user: EmuUser, subcommand: string, options: Record<string, string>, channel: EmuChannel) {
  return h.discord.runCommand({ user, channel, subcommand, options });
}

describe('/agent replies that fit where and how it was run', () => {
  let h: DiscordHarness;
  openForAll(async () => (h = await startDiscordBridge({ session: true })));
  const w = () => h.discord.world;

  it.each([
    ['instances', {}],
    ['bind', { instance: 'demo-poet' }],
  ] as const)('in a DM, `%s` says to run /agent in a server channel, not that the admin is not one', async (sub, options) => {
    const i = run(h, w().users.alice, sub, options, w().channels.dmAlice);
    const text = await answerOf(h, i, `${sub} in a DM`);
    expect(i.original?.flags).toBe(EPHEMERAL);
    expect(text).toMatch(/server channel/);
    expect(text).toContain('BINDINGS=discord:dm=');
    expect(text).not.toMatch(/Only admins/);
    expect(await h.bridge.bindings.get('discord', 'dm')).toMatchObject({ instanceId: 'demo-helper' });
  });

  it("helps in Discord's own option syntax, without Slack's typed-only forms", async () => {
    const text = await answerOf(h, run(h, w().users.bob, 'help', {}, w().channels.general), 'help');
    expect(text).toContain('`/agent bind instance:<id> [mode:mention|all]`');
    expect(text).toContain('`/agent credential instance:<id>`');
    expect(text).toContain('`/agent set setting:errors value:reply|reaction|silent`');
    expect(text).not.toContain('<instance-id>');
    expect(text).not.toMatch(/set prompts|Slack/);
  });

  it('refuses a set value with a word too many, naming it', async () => {
    const channel = w().channels.bound;
    const before = await h.bridge.bindings.get('discord', channel.id);
    const text = await answerOf(h, run(h, w().users.alice, 'set', { setting: 'errors', value: 'reaction extra' }, channel), 'set');
    expect(text).toMatch(/Too many words: `extra`/);
    expect(await h.bridge.bindings.get('discord', channel.id)).toEqual(before);
  });

  it('says, when run in a thread, that bind/unbind/set act on the parent channel and all its threads', async () => {
    const thread = w().channels.thread;
    const parent = w().channels.general;
    const bound = await answerOf(h, run(h, w().users.alice, 'bind', { instance: 'demo-poet', mode: 'all' }, thread), 'bind in a thread');
    expect(await h.bridge.bindings.get('discord', parent.id)).toMatchObject({ instanceId: 'demo-poet', mode: 'all' });
    expect(bound).toContain(`<#${parent.id}>`);
    expect(bound).toMatch(/parent channel/);
    const set = await answerOf(h, run(h, w().users.alice, 'set', { setting: 'context', value: 'thread' }, thread), 'set in a thread');
    expect(set).toContain(`<#${parent.id}>`);
    const unbound = await answerOf(h, run(h, w().users.alice, 'unbind', {}, thread), 'unbind in a thread');
    expect(unbound).toContain(`<#${parent.id}>`);
    // Run in the channel itself, nothing is added.
    const plain = await answerOf(h, run(h, w().users.alice, 'bind', { instance: 'demo-helper' }, parent), 'bind in the channel');
    expect(plain).not.toMatch(/parent channel/);
  });

  it('warns, binding a channel where the bot may not post, that it cannot answer there until given the permissions', async () => {
    const channel = w().channels.bound;
    h.discord.setBotMayPost(channel, false);
    try {
      const text = await answerOf(h, run(h, w().users.alice, 'bind', { instance: 'demo-poet' }, channel), 'bind where the bot may not post');
      expect(text).toMatch(/Channel bound/);
      expect(text).toMatch(/may not post in this channel[\s\S]*Send Messages/);
      const status = await answerOf(h, run(h, w().users.alice, 'status', {}, channel), 'status where the bot may not post');
      expect(status).toMatch(/may not post in this channel/);
    } finally {
      h.discord.setBotMayPost(channel, true);
    }
    const fine = await answerOf(h, run(h, w().users.alice, 'bind', { instance: 'demo-poet' }, channel), 'bind where the bot may post');
    expect(fine).not.toMatch(/may not post/);
  });

  it('takes an instance ID given in backticks or quotes without them', async () => {
    for (const typed of ['`demo-poet`', '"demo-poet"']) {
      const text = await answerOf(h, run(h, w().users.alice, 'bind', { instance: typed }, w().channels.general), `bind ${typed}`);
      expect(text).toContain('(`demo-poet`)');
      expect(await h.bridge.bindings.get('discord', w().channels.general.id)).toMatchObject({ instanceId: 'demo-poet' });
      await answerOf(h, run(h, w().users.alice, 'unbind', {}, w().channels.general), 'unbind');
    }
  });
});

describe('/agent credential without a dashboard session', () => {
  let h: DiscordHarness;
  openForAll(async () => (h = await startDiscordBridge({ session: false })));
  const w = () => h.discord.world;

  it('answers at once, privately, what the operator must set, and opens no form', async () => {
    const i = run(h, w().users.alice, 'credential', { instance: 'demo-helper' }, w().channels.general);
    const text = await answerOf(h, i, 'no-session answer');
    expect(i.original?.flags).toBe(EPHEMERAL);
    expect(text).toMatch(/needs a dashboard session/);
    expect(text).toContain('AGENT_SESSION_COOKIE');
    expect(i.responses.some((r) => r.type === 9)).toBe(false);
  });
});
