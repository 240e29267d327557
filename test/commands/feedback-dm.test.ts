import { afterAll, describe, expect, it } from 'vitest';
import type { AgentAccounts } from '../../src/accounts/agent-accounts.js';
import { createFeedbackStore } from '../../src/feedback/index.js';
import { cleanup, testRedis } from '../support/redis-helpers.js';
import { setup, text } from './setup.js';

const { redis, prefix } = testRedis();
afterAll(() => cleanup(redis, prefix));

const DM_SECTION = "In direct messages with the bot (they belong to no server, so every server's admins see them):";
const admin = { platform: 'discord', workspaceId: 'G1', channelId: 'C1', userId: 'UADMIN' } as const;

/** Votes cast in Discord DMs (workspace `dm`, where nobody is an admin) in `/agent feedback`. */
describe('feedback cast in DMs', () => {
  async function withVotes(overrides = {}) {
    const feedback = createFeedbackStore({ redis, prefix: `${prefix}:fb${Math.random().toString(36).slice(2)}` });
    const vote = { platform: 'discord', instanceId: 'inst_a', userId: 'U1', rating: 'negative' } as const;
    await feedback.record({ ...vote, workspaceId: 'G1', channelId: 'C1', agentMessageId: 'msg_guild' });
    await feedback.record({ ...vote, workspaceId: 'dm', channelId: 'dm', agentMessageId: 'msg_dm', link: 'https://discord.com/channels/@me/D1/M1' });
    await feedback.record({ ...vote, workspaceId: 'G2', channelId: 'C2', agentMessageId: 'msg_other_guild' });
    return setup(redis, prefix, { feedback, workspaceNoun: 'server', ...overrides }).commands;
  }

  it("are shown to a server's admins in a section of their own, apart from the server's votes", async () => {
    const s = text(await (await withVotes()).feedback(admin));
    const [server, dms] = s.split(DM_SECTION);
    expect(server).toContain('• inst_a: 👍 0 · 👎 1');
    expect(server).toContain('msg_guild');
    expect(dms).toContain('• inst_a: 👍 0 · 👎 1');
    expect(dms).toContain('https://discord.com/channels/@me/D1/M1');
    expect(s).not.toContain('msg_other_guild');
  });

  it('are not shown when each server pays for its own account (AGENT_ACCOUNT_MODE=per-workspace)', async () => {
    const commands = await withVotes({ accounts: { mode: 'per-workspace' } as unknown as AgentAccounts });
    const s = text(await commands.feedback(admin));
    expect(s).not.toContain(DM_SECTION);
    expect(s).not.toContain('@me');
  });
});
