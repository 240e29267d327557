import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { splitMarkdown } from '../../src/render/split-markdown.js';

/** CommonMark fences: a closer uses the opener's character, is as long, and has no info string. */
function fenceBalanced(chunk: string): boolean {
  let open: string | null = null;
  for (const line of chunk.split('\n')) {
    const m = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (!m) continue;
    if (open === null) open = m[1]!;
    else if (m[1]![0] === open[0] && m[1]!.length >= open.length && m[2]!.trim() === '') open = null;
  }
  return open === null;
}

describe('splitMarkdown', () => {
  it('keeps a short message whole', () => {
    expect(splitMarkdown('hello\n\nworld', 2000)).toEqual(['hello\n\nworld']);
  });

  it('breaks between paragraphs, not inside them', () => {
    const para = 'word '.repeat(60).trim();
    const chunks = splitMarkdown([para, para, para].join('\n\n'), 700);
    expect(chunks).toEqual([`${para}\n\n${para}`, para]);
  });

  it('closes and reopens a code block that must be split', () => {
    const code = '```ts\n' + Array.from({ length: 300 }, (_, i) => `const x${i} = ${i};`).join('\n') + '\n```';
    const chunks = splitMarkdown(`Intro\n\n${code}\n\nOutro`, 2000);
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(2000);
      expect(fenceBalanced(c)).toBe(true);
    }
    expect(chunks[1]!.startsWith('```ts\n')).toBe(true);
    const lines = chunks.join('\n').split('\n').filter((l) => l.startsWith('const x'));
    expect(lines).toHaveLength(300);
    expect(chunks.at(-1)!.endsWith('Outro')).toBe(true);
  });

  it('closes and reopens a code block nested in a list item or a quote, with its prefix', () => {
    const code = (prefix: string) => Array.from({ length: 300 }, (_, i) => `${prefix}const x${i} = ${i};`).join('\n');
    const cases = {
      nestedList: `- outer\n  - inner:\n\n    \`\`\`js\n${code('    ')}\n    \`\`\`\n\nAfter.`,
      tenthItem: `${Array.from({ length: 9 }, (_, i) => `${i + 1}. item`).join('\n')}\n10. item ten\n\n    \`\`\`\n${code('    ')}\n    \`\`\`\n`,
      quote: `> quoted\n>\n> \`\`\`\n${code('> ')}\n> \`\`\`\n`,
    };
    for (const [name, md] of Object.entries(cases)) {
      const chunks = splitMarkdown(md, 2000);
      expect(chunks.length, name).toBeGreaterThan(2);
      for (const c of chunks) {
        expect(c.length, name).toBeLessThanOrEqual(2000);
        // Every piece that holds code lines opens and closes its fence.
        const fences = c.split('\n').filter((l) => /^[ >]*```/.test(l)).length;
        if (c.includes('const x')) expect(fences, `${name}: ${c.slice(0, 60)}`).toBe(2);
      }
      expect(chunks.join('\n').split('\n').filter((l) => l.includes('const x'))).toHaveLength(300);
    }
  });

  it('reads an indented line that only looks like a fence (never closed at its depth) as text', () => {
    const md = `Intro\n\n    \`\`\` not a fence\n\n\`\`\`js\n${Array.from({ length: 200 }, (_, i) => `const y${i} = ${i};`).join('\n')}\n\`\`\``;
    const chunks = splitMarkdown(md, 1000);
    for (const c of chunks) expect(fenceBalanced(c)).toBe(true);
    expect(chunks[0]).toContain('    ``` not a fence');
  });

  it('splits one enormous word anywhere, keeping emoji whole', () => {
    const chunks = splitMarkdown('😀'.repeat(3000), 2000);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(2000);
    expect(chunks.join('')).toBe('😀'.repeat(3000));
  });

  it('never exceeds the limit and never leaves a fence open (property)', () => {
    const piece = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.constant('```js'),
      fc.constant('```'),
      fc.constant(''),
      fc.constant('x'.repeat(2500)),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), fc.integer({ min: 40, max: 3000 }), (parts, max) => {
        const chunks = splitMarkdown(parts.join('\n'), max);
        for (const c of chunks) {
          expect(c.length).toBeLessThanOrEqual(max);
          expect(fenceBalanced(c)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('splitMarkdown: where prose is cut', () => {
  it('cuts a block of lines between lines, not mid-line to fill a message', () => {
    const list = Array.from({ length: 30 }, (_, i) => `- item ${i} ${'words '.repeat(8).trim()}`).join('\n');
    const chunks = splitMarkdown(list, 200);
    for (const c of chunks) for (const line of c.split('\n')) expect(line).toMatch(/^- item \d+ words/);
    expect(chunks.join('\n')).toBe(list);
  });

  it('never splits a flag, a skin-toned emoji or an accented letter', () => {
    for (const cluster of ['🇫🇷', '👍🏽', 'e\u0301', '👨‍👩‍👧‍👦']) {
      for (let pad = 15; pad < 22; pad++) {
        const chunks = splitMarkdown('x'.repeat(pad) + cluster.repeat(3) + 'y'.repeat(30), 20);
        expect(chunks.join('')).toBe('x'.repeat(pad) + cluster.repeat(3) + 'y'.repeat(30));
        expect(chunks.join('|').split(cluster).join('')).not.toMatch(/\u0301|\u200D|\u{1F3FD}|\u{1F1EB}|\u{1F1F7}/u);
      }
    }
  });
});

describe('splitMarkdown: what it keeps', () => {
  it('adds no blank line between a quote or list item and the code fence right under it', () => {
    const md = ['> Quoted:', '> ```sh', '> npm ci', '> ```', '> after', '', '- Item:', '  ```', '  code', '  ```', '- Next'].join('\n');
    expect(splitMarkdown(md, 2000)).toEqual([md]);
  });
});
