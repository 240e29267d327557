import { afterAll, describe, expect, it } from 'vitest';
import { createSuggestedPromptStore } from '../../src/prompts/suggested-prompts.js';
import { cleanup, testRedis } from '../support/redis-helpers.js';
import { caller, setup, text } from './setup.js';

/** A channel the setup binds by default. */
const inBound = { ...caller, channelId: 'CDEF' };

const { redis, prefix } = testRedis();
afterAll(() => cleanup(redis, prefix));

describe('set prompts', () => {
  it('says when more than four titles were given and only the first four are kept', async () => {
    const s = setup(redis, prefix, { prompts: createSuggestedPromptStore({ redis, prefix: `${prefix}:prompts` }) });
    const five = text(await s.commands.set(inBound, 'prompts', 'one | two | three | four | five'));
    expect(five).toContain('• four');
    expect(five).not.toContain('• five');
    expect(five).toContain('Only the first 4 are kept');
    expect(text(await s.commands.set(inBound, 'prompts', 'one | two'))).not.toContain('Only the first');
  });
});
