import { afterAll, describe, expect, it } from 'vitest';
import { createSuggestedPromptStore, MAX_PROMPT_CHARS, parsePromptList } from '../../src/prompts/suggested-prompts.js';
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

  it('cuts a long title at a whole character, never inside an emoji', async () => {
    const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
    const pad = 'x'.repeat(MAX_PROMPT_CHARS - 1);
    // 74 + a 2-unit emoji: slice(0, 75) kept its first half.
    for (const title of [`${pad}😀 more`, `${pad.slice(1)}👨‍👩‍👧 more`, `${pad}🇫🇷`]) {
      const [cut] = parsePromptList(title);
      expect(cut!.length).toBeLessThanOrEqual(MAX_PROMPT_CHARS);
      expect(cut).not.toMatch(loneSurrogate);
      expect(title.startsWith(cut!)).toBe(true);
      const graphemes = [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(cut!)].map((g) => g.segment);
      expect(graphemes.every((g) => title.includes(g))).toBe(true);
      expect(cut).not.toMatch(/👨‍👩$|🇫$/u);
    }
    const store = createSuggestedPromptStore({ redis, prefix: `${prefix}:prompts2` });
    const [kept] = await store.set('slack', 'C1', [`${pad}😀`]);
    expect(kept).toBe(pad);
    expect(await store.get('slack', 'C1')).toEqual([pad]);
    // A title the old cut stored with half an emoji is read without the half.
    await redis.hset(`${prefix}:prompts2:prompts`, 'slack:C2', JSON.stringify([`${pad}\uD83D`, 'fine 😀']));
    expect(await store.get('slack', 'C2')).toEqual([pad, 'fine 😀']);
  });
});
