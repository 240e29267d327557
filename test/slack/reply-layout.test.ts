import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SLACK_CHUNK_CHARS } from '../../adapters/slack/render.js';
import { botMention, postsIn, say, startSlackBridge, W, type SlackHarness } from './harness.js';

/**
 * How a long answer looks in Slack: a list longer than a message is cut between its items (in
 * the posted text and in the sections Slack shows), and a long quoted line stays quoted.
 */
const LIST = Array.from({ length: 70 }, (_, i) => `- item ${i}: ` + 'check the settings and restart the worker '.repeat(2).trim()).join('\n');
const TABLE = ['| Instance | State |', '|---|---|', ...Array.from({ length: 160 }, (_, i) => `| instance-number-${i} | running on host ${i} |`)].join('\n') + '\n\nTHE END';
const QUOTE = '> ' + Array.from({ length: 700 }, (_, i) => `quoted${i}`).join(' ') + '\n\nTHE END';

describe('Slack reply layout across messages', () => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({
      mode: 'http',
      agent: {
        reply: (_id, message) => {
          if (message.includes('list')) return `${LIST}\n\nTHE END`;
          if (message.includes('quote')) return QUOTE;
          if (message.includes('table')) return TABLE;
          if (message.includes('inword')) return '这是**重要**的内容, un**believ**able, ~~old~~new and **Note:** fine. THE END';
          return `echo: ${message}`;
        },
      },
    });
  });
  afterAll(async () => h?.close());

  /** The posted chunks of the answer to `what`: their text, and the text of their sections. */
  async function ask(what: string) {
    const m = await say(h, { channel: W.general, text: `${botMention(h)} the ${what} please` });
    await h.slack.waitForCall('chat.postMessage', (c) => c.params.thread_ts === m.ts && /THE END/.test(c.params.text ?? ''), 15_000);
    const posts = postsIn(h, W.general, m.ts).map((c) => c.params);
    const sections = posts.flatMap((p) => {
      const blocks = (typeof p.blocks === 'string' ? JSON.parse(p.blocks) : (p.blocks ?? [])) as Array<{ type: string; text?: { text: string } }>;
      return blocks.filter((b) => b.type === 'section').map((b) => b.text!.text);
    });
    return { texts: posts.map((p) => String(p.text ?? '')), sections };
  }

  it('cuts a long list between items, in the text and in the sections', async () => {
    const { texts, sections } = await ask('list');
    expect(texts.length).toBeGreaterThanOrEqual(2);
    for (const piece of [...texts, ...sections]) {
      expect(piece.length).toBeLessThanOrEqual(SLACK_CHUNK_CHARS);
      for (const line of piece.split('\n').filter((l) => l && l !== 'THE END')) expect(line, `in:\n${piece.slice(0, 200)}`).toMatch(/^• item \d+: check/);
    }
  });

  it('cuts a long table between rows, and every message of it starts with the header row', async () => {
    const { texts } = await ask('table');
    const pieces = texts.filter((t) => t.includes('instance-number-'));
    expect(pieces.length).toBeGreaterThanOrEqual(2);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(SLACK_CHUNK_CHARS);
      const lines = piece.split('\n');
      // The widest cells are 19 characters ("instance-number-159", "running on host 159").
      expect(lines.slice(0, 3)).toEqual(['```', `${'Instance'.padEnd(19)} | State`, `${'-'.repeat(19)}-+-${'-'.repeat(19)}`]);
      for (const line of lines.slice(3).filter((l) => l.startsWith('instance'))) expect(line).toMatch(/^instance-number-\d+ +\| running on host \d+$/);
    }
    const rows = pieces.join('\n').match(/instance-number-\d+/g) ?? [];
    expect(rows).toEqual(Array.from({ length: 160 }, (_, i) => `instance-number-${i}`));
  });

  it('keeps every piece of a long quoted line quoted', async () => {
    const { texts, sections } = await ask('quote');
    const quoted = [...texts, ...sections].filter((p) => p.includes('quoted'));
    expect(quoted.length).toBeGreaterThanOrEqual(3);
    for (const piece of quoted) expect(piece.startsWith('&gt; ') || piece.startsWith('> '), `in:\n${piece.slice(0, 100)}`).toBe(true);
  });

  it('keeps bold, italic and strike that touch a letter formatted (CJK text, half-word emphasis)', async () => {
    const { texts, sections } = await ask('inword');
    const want = '这是\u200B*重要*\u200B的内容, un\u200B*believ*\u200Bable, ~old~\u200Bnew and *Note:* fine. THE END';
    expect(texts).toEqual([want]);
    expect(sections).toEqual([want]);
  });
});
