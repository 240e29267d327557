import { describe, expect, it } from 'vitest';
import { discordConfigOf } from '../../adapters/discord/config.js';
import { loadTestConfig } from '../support/config.js';

const withRoles = (ids: string) => loadTestConfig({ AGENT_API_BASE_URL: 'http://x', AGENT_API_KEY: 'k', DISCORD_TOKEN: 't', DISCORD_ADMIN_ROLE_IDS: ids });

describe('DISCORD_ADMIN_ROLE_IDS that are not role IDs', () => {
  it('is refused at start-up, naming the entry and where the ID is found (a role name or mention matched nobody, silently)', () => {
    for (const [ids, entry] of [['Admins', 'Admins'], ['900000000000000050, <@&900000000000000051>', '<@&900000000000000051>'], ['@Moderators', '@Moderators']]) {
      expect(() => withRoles(ids!)).toThrow(new RegExp(`DISCORD_ADMIN_ROLE_IDS: .*${entry!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.* is not a role ID.*Copy Role ID`));
    }
  });

  it('takes role IDs, with spaces and stray commas', () => {
    expect(discordConfigOf(withRoles(' 900000000000000050 ,, 900000000000000051,'))?.adminRoleIds).toEqual(['900000000000000050', '900000000000000051']);
    expect(discordConfigOf(withRoles(''))?.adminRoleIds).toEqual([]);
  });
});
