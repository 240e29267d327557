import { describe, expect, it } from 'vitest';
import { discordConfigOf } from '../../adapters/discord/config.js';
import { loadTestConfig } from '../support/config.js';

const withShardIds = (ids: string) => loadTestConfig({ AGENT_API_BASE_URL: 'http://x', AGENT_API_KEY: 'k', DISCORD_TOKEN: 't', DISCORD_SHARD_IDS: ids });

describe('DISCORD_SHARD_IDS that lists no shard', () => {
  it('is refused at start-up with the variable named, not later by discord.js', () => {
    for (const ids of [',', ' , ,']) {
      expect(() => withShardIds(ids)).toThrow(/DISCORD_SHARD_IDS lists no shard: give shard numbers or ranges, for example 0,1 or 0-3, or leave it unset/);
    }
  });

  it('still means "every shard" when empty, and ignores a stray comma next to real IDs', () => {
    expect(discordConfigOf(withShardIds(''))?.shards).toEqual({ count: 'auto' });
    expect(discordConfigOf(withShardIds('0,,1,'))?.shards).toEqual({ ids: [0, 1], count: 'auto' });
  });
});
