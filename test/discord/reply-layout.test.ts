import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mention, startDiscordBridge, type DiscordHarness } from './harness.js';
import type { Json } from '../emulators/discord/index.js';

/**
 * How a long answer looks once Discord has it: a list or a quote longer than a message is cut
 * between its lines, a quoted line cut between words stays quoted, an inline code span or a link
 * is never cut, an emoji sequence (family, flag, skin tone) is never halved, and a table or a
 * `####` heading, which Discord does not render, arrives in a form it does.
 */
const FAMILY = '👨‍👩‍👧‍👦';
const LIST = Array.from({ length: 40 }, (_, i) => `- item ${i}: ` + 'check the settings and restart the worker '.repeat(2).trim()).join('\n');
const QUOTE = '> ' + Array.from({ length: 300 }, (_, i) => `quoted${i}`).join(' ');
const INLINE = Array.from({ length: 200 }, (_, i) => (i % 3 === 0 ? `run \`npm run task ${i}\` then see [the guide ${i}](https://example.com/guide_(${i}))` : `word${i}`)).join(' ');
const TABLE = 'Status:\n\n| Instance | **State** | Notes |\n|---|:-:|---|\n| alpha | `up` | a &amp; b |\n| beta-long-name | down | x |\n\n#### Next steps\nRestart beta.';
const LONG_TABLE = ['| Instance | State |', '|---|---|', ...Array.from({ length: 90 }, (_, i) => `| instance-number-${i} | running on host ${i} |`)].join('\n');
const NESTED = ['> Quoted advice:', '> ```sh', '> npm ci', '> ```', '> and then restart.', '', '1. Install:', '   ```sh', '   npm ci', '   ```', '2. Start.'].join('\n');
const EMOJI = 'x'.repeat(1998) + FAMILY + 'y'.repeat(50);

let h: DiscordHarness;
beforeAll(async () => {
  h = await startDiscordBridge({
    agent: {
      reply: (_id, message) => {
        if (message.includes('LIST')) return LIST;
        if (message.includes('QUOTE')) return QUOTE;
        if (message.includes('INLINE')) return INLINE;
        if (message.includes('EMOJI')) return EMOJI;
        if (message.includes('LONGTAB')) return LONG_TABLE;
        if (message.includes('TABLE')) return TABLE;
        if (message.includes('NESTED')) return NESTED;
        return `echo: ${message}`;
      },
    },
  });
});
afterAll(async () => {
  await h?.close();
});

const w = () => h.discord.world;

/** The chunks the bot posted for `what`, in order (a short question after it marks the end). */
async function ask(what: string): Promise<string[]> {
  const m = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: `${mention(h.discord)} ${what}` });
  await h.discord.waitFor(() => h.discord.repliesTo(m.id)[0], what);
  const barrier = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: `${mention(h.discord)} after ${what}` });
  const end = await h.discord.waitFor(() => h.discord.repliesTo(barrier.id)[0], `after ${what}`);
  const all = h.discord.botMessages(w().channels.general.id);
  const chunks = all.slice(all.indexOf(h.discord.repliesTo(m.id)[0]!), all.indexOf(end)).map((c: Json) => String(c.content));
  for (const c of chunks) expect(c.length).toBeLessThanOrEqual(2000);
  return chunks;
}

describe('discord reply layout across messages', () => {
  it('cuts a list longer than a message between items: every message starts with an item', async () => {
    const chunks = await ask('LIST');
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    for (const c of chunks) for (const line of c.split('\n')) expect(line, `in:\n${c.slice(0, 300)}`).toMatch(/^- item \d+: check/);
    expect(chunks.join('\n')).toBe(LIST);
  });

  it('keeps every piece of a long quoted line quoted', async () => {
    const chunks = await ask('QUOTE');
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    for (const c of chunks) expect(c.startsWith('> ')).toBe(true);
    expect(chunks.map((c) => c.slice(2)).join(' ')).toBe(QUOTE.slice(2));
  });

  it('never cuts inside an inline code span or a link', async () => {
    const chunks = await ask('INLINE');
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    for (const c of chunks) {
      expect((c.match(/`/g) ?? []).length % 2, `odd backticks in:\n${c.slice(-200)}`).toBe(0);
      expect((c.match(/\[/g) ?? []).length).toBe((c.match(/\]\(https:\/\/example\.com\/guide_\(\d+\)\)/g) ?? []).length);
    }
  });

  it('never halves an emoji sequence at a cut', async () => {
    const chunks = await ask('EMOJI');
    expect(chunks.length).toBe(2);
    expect(chunks.join('')).toBe(EMOJI);
    expect(chunks.filter((c) => c.includes(FAMILY))).toHaveLength(1);
  });

  it('shows a table as aligned columns in a code block and a #### heading as a bold line (Discord renders neither)', async () => {
    const chunks = await ask('TABLE');
    expect(chunks).toEqual([
      [
        'Status:',
        '',
        '```',
        'Instance       | State | Notes',
        '---------------+-------+------',
        'alpha          | up    | a & b',
        'beta-long-name | down  | x',
        '```',
        '',
        '**Next steps**',
        'Restart beta.',
      ].join('\n'),
    ]);
  });

  it('cuts a table longer than a message between rows, each message a code block starting with the header row', async () => {
    const chunks = await ask('LONGTAB');
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    for (const c of chunks) {
      const lines = c.split('\n');
      // The widest cells are 18 characters ("instance-number-89", "running on host 89").
      expect(lines.slice(0, 3)).toEqual(['```', `${'Instance'.padEnd(18)} | State`, `${'-'.repeat(18)}-+-${'-'.repeat(18)}`]);
      expect(lines.at(-1)).toBe('```');
    }
    const rows = chunks.join('\n').match(/instance-number-\d+/g) ?? [];
    expect(rows).toEqual(Array.from({ length: 90 }, (_, i) => `instance-number-${i}`));
  });

  it('posts a short answer as written: a code fence inside a quote or a list item does not split it in two', async () => {
    expect(await ask('NESTED')).toEqual([NESTED]);
  });
});
