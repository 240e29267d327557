import { describe, expect, it } from 'vitest';
import { FORWARD_SHORTENED, fitForwarded } from '../../src/ingress/forwarded-fit.js';

describe('fitForwarded', () => {
  const own = 'why did this fail?';
  const forward = `Forwarded message:\n${Array.from({ length: 50 }, (_, i) => `> line ${i}`).join('\n')}`;
  const text = `${own}\n\n${forward}`;

  it('leaves a text that fits as it is, whoever wrote it', () => {
    expect(fitForwarded(text, own.length, text.length)).toBe(text);
    expect(fitForwarded(text, undefined, text.length)).toBe(text);
  });

  it('cuts the forward between lines, within the limit, and says so', () => {
    const fitted = fitForwarded(text, own.length, 200)!;
    expect(fitted.length).toBeLessThanOrEqual(200);
    expect(fitted.startsWith(`${own}\n\nForwarded message:\n> line 0\n`)).toBe(true);
    expect(fitted).toMatch(new RegExp(`> line \\d+\\n\\${FORWARD_SHORTENED.slice(0, -1)}\\]$`));
  });

  it('refuses when the own words alone leave no room, or all of it is own words', () => {
    expect(fitForwarded(text, own.length, own.length + 5)).toBeUndefined();
    expect(fitForwarded(text, undefined, 200)).toBeUndefined();
  });

  it('keeps the own words whole when the forward gets no room at all', () => {
    const max = own.length + FORWARD_SHORTENED.length + 1;
    expect(fitForwarded(text, own.length, max)).toBe(`${own}\n${FORWARD_SHORTENED}`);
  });

  it('never leaves half a surrogate pair at the cut', () => {
    const emoji = `${own}\n\n> ${'😀'.repeat(200)}`;
    for (let max = 60; max < 80; max++) {
      const fitted = fitForwarded(emoji, own.length, max)!;
      expect(fitted.length).toBeLessThanOrEqual(max);
      expect(fitted).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    }
  });

  it('keeps what follows the forward (files read in) whole, cutting the forward before it', () => {
    const files = '\n\nnotes.txt:\n```\nkeep me\n```';
    const withFiles = `${text}${files}`;
    const fitted = fitForwarded(withFiles, own.length, 200, text.length)!;
    expect(fitted.length).toBeLessThanOrEqual(200);
    expect(fitted.startsWith(`${own}\n\nForwarded message:\n> line 0\n`)).toBe(true);
    expect(fitted.endsWith(`\n${FORWARD_SHORTENED}${files}`)).toBe(true);
  });

  it('files too long to keep beside the own words: cut from the end', () => {
    const files = `\n\nbig.txt:\n${'y'.repeat(300)}`;
    const fitted = fitForwarded(`${text}${files}`, own.length, 200, text.length)!;
    expect(fitted.length).toBeLessThanOrEqual(200);
    expect(fitted.startsWith(own)).toBe(true);
  });
});

