import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, postsIn, say, startSlackBridge, W, type SlackHarness } from './harness.js';

/**
 * Answers an agent (or a prompt injection steering it) can send that a Markdown renderer chokes
 * on. Each is billed, so each must end as a post in the thread, soon, with the process free:
 * - 3,000 nested quotes overflowed marked's stack: the job was retried without end, nothing posted;
 * - 300 KB of `*a` took the renderer a minute (its time grows with the square of the length);
 * - only link definitions, or only invisible characters, rendered to nothing and were dropped.
 */
const ANSWERS: Record<string, string> = {
  deep: `${'>'.repeat(3_000)} hi`,
  stars: '*a'.repeat(150_000),
  defs: '[ref]: https://example.com/docs',
  invisible: '\u200B\u200C\u200D\u2060\uFEFF',
};
/** The agent's API key as a model might quote it: Markdown-escaped, or with HTML entities. */
const escapedKey = (key: string) => `key: ${key.replace(/[^A-Za-z0-9]/g, '\\$&')} or ${key.replace(/-/g, '&#45;').replace(/^./, (c) => `&#${c.charCodeAt(0)};`)}`;

describe('Slack: answers the renderer chokes on are still posted', () => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({
      mode: 'http',
      agent: { reply: (_id, m) => (m.endsWith('escaped') ? escapedKey(h.agent.apiKey) : (ANSWERS[m.trim().split(' ').at(-1)!] ?? `echo: ${m}`)) },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  async function answerTo(kind: string) {
    const m = await say(h, { channel: W.general, text: `${botMention(h)} ${kind}` });
    await h.slack.waitForCall('reactions.remove', (c) => c.params.timestamp === m.ts, 30_000);
    return postsIn(h, W.general, m.ts).map((c) => String(c.params.text ?? ''));
  }

  it('3,000 nested quotes: posted as written (its Markdown escaped)', async () => {
    const posts = await answerTo('deep');
    expect(posts.join('')).toBe(`${'&gt;'.repeat(3_000)} hi`);
  });

  it('300 KB of `*a`: only what fits in 10 messages is rendered, the last says the answer was cut', async () => {
    const posts = await answerTo('stars');
    expect(posts.length).toBeLessThanOrEqual(10);
    expect(posts.at(-1)).toMatch(/The answer was cut here/);
    // The process stayed free: a plain question is answered right after.
    expect(await answerTo('plain')).toEqual(['echo: plain']);
  }, 60_000);

  it('only link definitions, or only invisible characters: the empty-reply note, not nothing', async () => {
    expect(await answerTo('defs')).toEqual([expect.stringMatching(/The agent sent an empty reply/)]);
    expect(await answerTo('invisible')).toEqual([expect.stringMatching(/The agent sent an empty reply/)]);
  });

  it('a secret the agent quotes escaped (backslashes, entities) is redacted as the rendered post shows it', async () => {
    const posts = await answerTo('escaped');
    expect(posts).toHaveLength(1);
    expect(posts[0]).not.toContain(h.agent.apiKey);
    expect(posts[0]).toBe('key: [REDACTED] or [REDACTED]');
  });
});
