import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { markdownToMrkdwn } from '../../adapters/slack/mrkdwn.js';
import { neutraliseMentions } from '../../adapters/slack/escape.js';
import { renderNotice, renderSlackReply, SLACK_CHUNK_CHARS } from '../../adapters/slack/render.js';
import { commandReplyMessage } from '../../adapters/slack/blocks.js';
import { findPings } from '../emulators/slack/index.js';
import { validateBlocks } from '../emulators/slack/validate.js';

const fenceCount = (chunk: string) => chunk.split('\n').filter((l) => /^```/.test(l)).length;

describe('Markdown → mrkdwn', () => {
  it.each([
    ['**bold** and __bold__', '*bold* and *bold*'],
    ['*it* and _it_', '_it_ and _it_'],
    ['~~gone~~', '~gone~'],
    ['`a < b`', '`a &lt; b`'],
    ['# Title', '*Title*'],
    ['## **Bold** title', '*Bold title*'],
    ['[docs](https://example.com/a?b=1&c=2)', '<https://example.com/a?b=1&amp;c=2|docs>'],
    ['see https://example.com', 'see <https://example.com>'],
    ['[x](javascript:alert(1))', 'x'],
    ['[a|b](https://e.com/x|y)', '<https://e.com/x%7Cy|a¦b>'],
    ['- one\n- two\n  - nested', '• one\n• two\n  ◦ nested'],
    ['1. one\n2. two', '1. one\n2. two'],
    ['- [x] done\n- [ ] todo', '• ☑ done\n• ☐ todo'],
    ['> quoted\n> text', '> quoted\n> text'],
    ['Tom &amp; Jerry', 'Tom &amp; Jerry'],
    ['a <b>tag</b>', 'a &lt;b&gt;tag&lt;/b&gt;'],
    ['---', '──────────'],
  ])('%j → %j', (md, expected) => {
    expect(markdownToMrkdwn(md)).toBe(expected);
  });

  it('drops the language of a code block and keeps its text escaped', () => {
    expect(markdownToMrkdwn('```js\nif (a < b && c) {}\n```')).toBe('```\nif (a &lt; b &amp;&amp; c) {}\n```');
  });

  it('keeps three backticks inside code from closing the block', () => {
    const out = markdownToMrkdwn('````\nuse ``` here\n````');
    expect(fenceCount(out)).toBe(2);
    expect(out).toContain('``\u200B`');
  });

  it('renders a table as aligned columns in a code block', () => {
    const out = markdownToMrkdwn('| id | name |\n|---|---|\n| a | Alpha |\n| bb | **B** |');
    expect(out).toBe('```\nid | name\n---+------\na  | Alpha\nbb | B\n```');
  });

  it.each(['<!channel>', '<!here>', '<!everyone>', '<@U123ABC>', '<!subteam^S1|devs>', '<@W1|x>', '[x](<!channel>)', '`<!here>`', '```\n<!channel>\n```', '<https://x.com|<!here>>'])(
    'neutralises %j',
    (md) => {
      expect(findPings(markdownToMrkdwn(md))).toEqual([]);
    },
  );

  it('never lets anything that pings through, whatever the input', () => {
    const pingy = fc.constantFrom('<!channel>', '<!here>', '<!everyone>', '<@U1>', '<!subteam^S1>', '<', '>', '|', '&', '`', '```\n', '**', '[', '](', ')', '\n\n', '@here');
    fc.assert(
      fc.property(fc.array(fc.oneof(pingy, fc.string()), { maxLength: 40 }), (parts) => {
        const md = parts.join('');
        expect(findPings(markdownToMrkdwn(md))).toEqual([]);
        expect(findPings(neutraliseMentions(md))).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});

describe('renderSlackReply', () => {
  it('splits within the limit with balanced fences, for any mix of prose and code', () => {
    const block = fc.oneof(
      fc.lorem({ maxCount: 80 }),
      fc.array(fc.string({ maxLength: 120 }), { maxLength: 80 }).map((lines) => `\`\`\`\n${lines.map((l) => l.replace(/`/g, "'")).join('\n')}\n\`\`\``),
      fc.string({ maxLength: 3000 }),
    );
    fc.assert(
      fc.property(fc.array(block, { maxLength: 12 }), fc.integer({ min: 200, max: SLACK_CHUNK_CHARS }), (blocks, limit) => {
        for (const chunk of renderSlackReply(blocks.join('\n\n'), limit)) {
          expect(chunk.length).toBeLessThanOrEqual(limit);
          expect(fenceCount(chunk) % 2).toBe(0);
          expect(findPings(chunk)).toEqual([]);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('never cuts a link whose label has spaces, or an entity, at a message boundary', () => {
    for (let pad = 3_700; pad < 3_800; pad += 7) {
      const reply = `${'word '.repeat(pad / 5)}see [the release notes for this week](https://example.com/notes) & more ${'tail '.repeat(50)}`;
      const chunks = renderSlackReply(reply);
      expect(chunks.length).toBeGreaterThan(1);
      for (const chunk of chunks) {
        expect(chunk.length).toBeLessThanOrEqual(SLACK_CHUNK_CHARS);
        // Every `<` opens a token that closes in the same message.
        expect(chunk.replace(/<[^<>\n]*>/g, '')).not.toMatch(/[<>]/);
        expect(chunk).not.toMatch(/&(a|am|amp)?$/);
      }
      expect(chunks.join(' ')).toContain('<https://example.com/notes|the release notes for this week>');
    }
  });

  it('gives nothing for an empty reply', () => {
    expect(renderSlackReply('   \n ')).toEqual([]);
  });

  it('escapes notices as plain words', () => {
    expect(renderNotice('Use `/agent bind <instance-id>` & <!here>')).toBe('Use `/agent bind &lt;instance-id&gt;` &amp; &lt;!here&gt;');
  });
});

describe('command replies as Block Kit', () => {
  it('is valid Block Kit within Slack’s limits, however long', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.string({ maxLength: 300 }),
        fc.array(fc.string({ maxLength: 5000 }), { maxLength: 30 }),
        fc.array(fc.array(fc.string({ maxLength: 60 }), { minLength: 3, maxLength: 3 }), { maxLength: 300 }),
        (ok, title, lines, rows) => {
          const m = commandReplyMessage({ ok, title, lines, table: { columns: ['a', 'b', 'c'], rows } });
          expect(validateBlocks(m.blocks)).toBeUndefined();
          expect(m.text.length).toBeLessThanOrEqual(3000);
          expect(findPings(JSON.stringify(m))).toEqual([]);
        },
      ),
      { numRuns: 100 },
    );
  });
});
