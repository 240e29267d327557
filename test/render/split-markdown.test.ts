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
