import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmuInteraction } from '../emulators/discord/index.js';
import { dumpKeys } from '../support/redis-cleanup.js';
import { mention, startDiscordBridge, type DiscordHarness } from './harness.js';

/**
 * Issue 17, per-workspace accounts on Discord: a server's admin runs `/agent setup`, types the
 * server's own key into the modal, and the server's messages are then sent with that key.
 */
const GUILD_KEY = `guild-key-${randomUUID()}`;

let h: DiscordHarness;
beforeAll(async () => {
  h = await startDiscordBridge({
    env: { AGENT_ACCOUNT_MODE: 'per-workspace', AGENT_API_KEY: '', INSTALLATION_ENCRYPTION_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'info' },
    agent: {
      reply: (id, m) => `${id} says: ${m}`,
      otherAccounts: [{ apiKey: GUILD_KEY, instances: [{ id: 'demo-helper', name: 'Guild Helper', status: 'running', type: 'chat' }] }],
    },
  });
});
afterAll(async () => h?.close());

const w = () => h.discord.world;
const answerOf = (i: EmuInteraction, label: string) => h.discord.waitFor(() => (i.original?.content ? i.original.content : undefined), label);

describe('AGENT_ACCOUNT_MODE=per-workspace on Discord', () => {
  it('before setup a mention is told to run /agent setup and nothing is called', async () => {
    const m = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: `${mention(h.discord)} hello before setup` });
    const notice = await h.discord.waitFor(() => h.discord.repliesTo(m.id)[0], 'notice');
    expect(String(notice.content)).toContain('/agent setup');
    expect(h.agent.chatCalls()).toHaveLength(0);
  });

  it('a non-admin cannot open the setup form', async () => {
    const denied = h.discord.runCommand({ user: w().users.bob, channel: w().channels.bound, subcommand: 'setup', options: {} });
    expect(await answerOf(denied, 'refusal')).toMatch(/only admins/i);
    expect(denied.responses.some((r) => r.type === 9)).toBe(false);
  });

  it('a key pasted with quotes or "Bearer " is refused with the fix, before the service is asked', async () => {
    for (const [pasted, words] of [[`"${GUILD_KEY}"`, /pasted with quotes around it: paste the key alone/], [`Bearer ${GUILD_KEY}`, /starts with "Bearer ": paste the key alone/]] as const) {
      const calls = h.agent.calls.length;
      const submit = h.discord.submitModal({ user: w().users.alice, channel: w().channels.bound, customId: 'agent:setup', fields: { api_key: pasted, session: '' } });
      const answer = await answerOf(submit, 'setup outcome');
      expect(answer).toMatch(words);
      expect(answer).not.toContain(GUILD_KEY);
      expect(h.agent.calls.length).toBe(calls);
    }
  });

  it("the admin's modal stores the server's key; the server's messages are then sent with it", async () => {
    const open = h.discord.runCommand({ user: w().users.alice, channel: w().channels.bound, subcommand: 'setup', options: {} });
    const modal = await h.discord.waitFor(() => open.responses.find((r) => r.type === 9), 'setup modal');
    expect(modal.data.custom_id).toBe('agent:setup');
    const submit = h.discord.submitModal({ user: w().users.alice, channel: w().channels.bound, customId: 'agent:setup', fields: { api_key: GUILD_KEY, session: '' } });
    expect(await answerOf(submit, 'setup outcome')).toMatch(/Saved/);

    const m = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: `${mention(h.discord)} hello after setup` });
    const reply = await h.discord.waitFor(() => h.discord.repliesTo(m.id).find((r) => String(r.content).includes('says')), 'answer');
    expect(reply.content).toBe('demo-helper says: hello after setup');
    expect(h.agent.chatCalls().map((c) => c.headers['x-api-key'])).toEqual([GUILD_KEY]);
    expect(h.logs.text).not.toContain(GUILD_KEY);
    expect(await dumpKeys(h.prefix)).not.toContain(GUILD_KEY);
  });
});
