import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordBridge, type DiscordHarness } from './harness.js';
import { dumpKeys } from '../support/redis-cleanup.js';
import type { EmuChannel, EmuInteraction, EmuUser } from '../emulators/discord/index.js';

const EPHEMERAL = 64;
const CANARY = {
  discordToken: 'CANARY-discord-token-5d1e7c',
  apiKey: 'CANARY-agent-api-key-93b2aa',
  cookie: 'session=CANARY-session-cookie-1f0c44',
  credential: 'CANARY-credential-value-8e6d0b',
};

let h: DiscordHarness;
beforeAll(async () => {
  h = await startDiscordBridge({
    emulator: { token: CANARY.discordToken },
    agent: { apiKey: CANARY.apiKey, sessionCookie: CANARY.cookie },
    session: true,
  });
});
afterAll(async () => {
  await h?.close();
});

const w = () => h.discord.world;
/** The private answer once it is complete: the original response, edited if it was deferred. */
async function answerOf(i: EmuInteraction, label: string): Promise<string> {
  return h.discord.waitFor(() => (i.original?.content ? i.original.content : undefined), label);
}
function run(user: EmuUser, subcommand: string, options: Record<string, string> = {}, channel: EmuChannel = w().channels.bound) {
  return h.discord.runCommand({ user, channel, subcommand, options });
}

const ADMIN_COMMANDS: Array<[string, Record<string, string>, RegExp]> = [
  ['instances', {}, /demo-helper[\s\S]*demo-poet/],
  ['bind', { instance: 'demo-poet', mode: 'mention' }, /Channel bound[\s\S]*demo-poet/],
  ['status', {}, /Bound to `demo-poet`/],
  ['set', { setting: 'errors', value: 'reaction' }, /Setting changed[\s\S]*warning reaction/],
  ['set', { setting: 'quota-user-per-minute', value: '5' }, /Quota `user-per-minute` is now 5/],
  ['why', {}, /Why no answer/],
  ['audit', {}, /Audit log[\s\S]*bind/],
  ['unbind', {}, /Channel unbound/],
];

describe('/agent through the real bridge', () => {
  it('registered /agent guild-scoped with Manage Server as the default permission', () => {
    const put = h.discord.calls.find((c) => c.method === 'PUT' && c.path === `/applications/${w().applicationId}/guilds/${w().guildId}/commands`);
    expect(put?.json).toEqual([
      expect.objectContaining({ name: 'agent', default_member_permissions: '32' }),
      expect.objectContaining({ name: 'Ask the agent', type: 3 }),
    ]);
    // `contexts` is for globally-scoped commands only.
    expect((put?.json as Array<{ contexts?: unknown }>).map((c) => c.contexts)).toEqual([undefined, undefined]);
    const subs = (put?.json as Array<{ options: Array<{ name: string }> }>)[0]!.options.map((o) => o.name);
    expect(subs).toEqual(['instances', 'bind', 'unbind', 'status', 'credential', 'setup', 'set', 'why', 'audit', 'feedback', 'help']);
  });

  it('answers help to anyone, privately', async () => {
    for (const user of [w().users.alice, w().users.bob]) {
      const i = run(user, 'help');
      expect(await answerOf(i, `help for ${user.username}`)).toMatch(/bind/);
      expect(i.original?.flags).toBe(EPHEMERAL);
    }
  });

  it.each(ADMIN_COMMANDS)('runs %s for an admin (Manage Server), privately', async (sub, options, expected) => {
    const i = run(w().users.alice, sub, options);
    const text = await answerOf(i, `${sub} answer`);
    expect(text).toMatch(expected);
    expect(text).not.toMatch(/only admins/i);
    expect(i.original?.flags).toBe(EPHEMERAL);
    // Deferred first, then edited: Discord's 3-second limit is never at stake.
    expect(i.responses[0]).toMatchObject({ kind: 'callback', type: 5 });
  });

  it('answers setup under the default AGENT_ACCOUNT_MODE=shared with nothing to set up, privately and without a key form', async () => {
    const i = run(w().users.alice, 'setup');
    expect(await answerOf(i, 'setup answer')).toMatch(/AGENT_ACCOUNT_MODE=shared[\s\S]*nothing to set up here/);
    expect(i.original?.flags).toBe(EPHEMERAL);
    expect(i.responses.some((r) => r.type === 9)).toBe(false);
  });

  it('runs admin commands for a member with an admin role (DISCORD_ADMIN_ROLE_IDS)', async () => {
    const i = run(w().users.carol, 'bind', { instance: 'demo-helper' });
    expect(await answerOf(i, 'bind by role admin')).toMatch(/demo-helper/);
  });

  it.each(['instances', 'bind', 'unbind', 'status', 'credential', 'set', 'why', 'audit'])(
    'refuses %s to a non-admin, privately',
    async (sub) => {
      const options: Record<string, string> = sub === 'bind' || sub === 'credential' ? { instance: 'demo-helper' } : sub === 'set' ? { setting: 'errors', value: 'silent' } : {};
      const i = run(w().users.bob, sub, options);
      expect(await answerOf(i, `refusal of ${sub}`)).toMatch(/only admins/i);
      expect(i.original?.flags).toBe(EPHEMERAL);
      expect(i.responses.some((r) => r.type === 9)).toBe(false);
    },
  );

  it('parses no mentions in any answer (instance names could hold @everyone)', () => {
    const answers = [...h.discord.store.interactions.values()].flatMap((i) =>
      i.responses.filter((r) => r.kind === 'edit-original' || r.kind === 'followup' || r.type === 4),
    );
    expect(answers.length).toBeGreaterThan(10);
    for (const a of answers) expect(a.data.allowed_mentions).toEqual({ parse: [] });
  });

  it('records refused attempts in the audit log', async () => {
    const i = run(w().users.alice, 'audit');
    expect(await answerOf(i, 'audit')).toMatch(/refused/i);
  });

  it('autocompletes instances for admins (name, id, status; filtered) and nothing for others', async () => {
    const i = h.discord.autocomplete({ user: w().users.alice, channel: w().channels.bound, subcommand: 'bind', focused: 'instance', options: { instance: 'poe' } });
    const result = await h.discord.waitFor(() => i.responses.find((r) => r.type === 8), 'autocomplete result');
    expect(result.data.choices).toEqual([{ name: expect.stringMatching(/Demo Poet · demo-poet · running/), value: 'demo-poet' }]);
    const all = h.discord.autocomplete({ user: w().users.alice, channel: w().channels.bound, subcommand: 'credential', focused: 'instance', options: { instance: '' } });
    const everything = await h.discord.waitFor(() => all.responses.find((r) => r.type === 8), 'all choices');
    expect(everything.data.choices.map((c: { value: string }) => c.value)).toEqual(['demo-helper', 'demo-poet', 'demo-sleepy']);
    const denied = h.discord.autocomplete({ user: w().users.bob, channel: w().channels.bound, subcommand: 'bind', focused: 'instance', options: { instance: '' } });
    expect((await h.discord.waitFor(() => denied.responses.find((r) => r.type === 8), 'denied')).data.choices).toEqual([]);
  });

  it('adds a credential through the modal; the value is in no log, Redis key or REST call', async () => {
    const open = run(w().users.alice, 'credential', { instance: 'demo-helper' });
    const modal = await h.discord.waitFor(() => open.responses.find((r) => r.type === 9), 'modal');
    expect(modal.data.custom_id).toBe('agent:credential:demo-helper');
    const submit = h.discord.submitModal({
      user: w().users.alice,
      channel: w().channels.bound,
      customId: modal.data.custom_id,
      fields: { key: 'GITHUB_TOKEN', value: CANARY.credential },
    });
    const text = await answerOf(submit, 'credential confirmation');
    expect(text).toMatch(/GITHUB_TOKEN/);
    expect(submit.original?.flags).toBe(EPHEMERAL);
    expect(h.agent.credentials.get('demo-helper')?.get('GITHUB_TOKEN')).toBe(CANARY.credential);

    const logs = h.logs.text;
    const redis = await dumpKeys(h.prefix);
    const rest = JSON.stringify(h.discord.calls.map((c) => ({ path: c.rawPath, query: c.query, body: c.body, headers: { ...c.headers, authorization: undefined } })));
    expect(logs.length).toBeGreaterThan(0);
    expect(redis).toContain('credential');
    for (const [name, secret] of Object.entries(CANARY)) {
      expect(logs.includes(secret), `${name} in logs`).toBe(false);
      expect(redis.includes(secret), `${name} in Redis`).toBe(false);
      expect(rest.includes(secret), `${name} in REST calls`).toBe(false);
    }
  });

  it('shows credential errors to the admin only (unknown instance)', async () => {
    const submit = h.discord.submitModal({
      user: w().users.alice,
      channel: w().channels.bound,
      customId: 'agent:credential:no-such-instance',
      fields: { key: 'API_KEY', value: CANARY.credential },
    });
    const text = await answerOf(submit, 'credential error');
    expect(text).toMatch(/No instance with ID `no-such-instance`/);
    expect(submit.original?.flags).toBe(EPHEMERAL);
    expect(text).not.toContain(CANARY.credential);
    expect(h.logs.text).not.toContain(CANARY.credential);
  });
});
