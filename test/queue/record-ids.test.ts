import { afterAll, describe, expect, it } from 'vitest';
import { recordIdsStartingWith } from '../../src/queue/record-ids.js';
import { cleanup, testRedis } from '../support/redis-helpers.js';

const { redis, prefix } = testRedis();
afterAll(async () => cleanup(redis, prefix));

/** The message IDs a deletion looks up ("Ask the agent" questions about the deleted message). */
describe('recordIdsStartingWith', () => {
  it('finds the message IDs with the prefix, not their progress fields, and reads the prefix literally', async () => {
    const key = `${prefix}:msgs`;
    await redis.hset(key, {
      'ask-1-a': '{}',
      'ask-1-a:reply': 'r',
      'ask-1-b': '{}',
      'ask-1-b:started': '1',
      'ask-12-c': '{}',
      'C1:1.2:ask:U1': '{}',
      'C1:1.2:ask:U1:gaveUp': '{}',
      'C1:1.2': '{}',
      'a*b-1': '{}',
      'aXb-1': '{}',
    });
    expect((await recordIdsStartingWith(redis, key, 'ask-1-')).sort()).toEqual(['ask-1-a', 'ask-1-b']);
    expect(await recordIdsStartingWith(redis, key, 'C1:1.2:ask:')).toEqual(['C1:1.2:ask:U1']);
    expect(await recordIdsStartingWith(redis, key, 'a*b')).toEqual(['a*b-1']);
    expect(await recordIdsStartingWith(redis, `${prefix}:none`, 'ask-')).toEqual([]);
  });
});
