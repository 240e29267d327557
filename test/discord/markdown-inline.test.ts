import { describe, expect, it } from 'vitest';
import { discordMarkdown } from '../../adapters/discord/markdown.js';

/**
 * Two marks Discord reads otherwise than the agent's CommonMark: `||` hides text as a spoiler
 * and `__x__` underlines (CommonMark: bold). Code keeps both as written.
 */
describe('discordMarkdown: Discord-only inline marks', () => {
  it('escapes || so "a || b … c || d" is not hidden as a spoiler', () => {
    expect(discordMarkdown('Use a || b here, or c || d there.')).toBe('Use a \\|\\| b here, or c \\|\\| d there.');
  });

  it('keeps || inside code spans and fenced blocks (also fences in quotes and list items)', () => {
    const text = ['Run `a || b` or ``x || `y` ``.', '```sh', 'test -f x || exit 1', '```', '> ```', '> p || q', '> ```', '- item:', '  ~~~', '  m || n', '  ~~~'].join('\n');
    expect(discordMarkdown(text)).toBe(text);
  });

  it('escapes outside a code span on the same line, and leaves an unmatched backtick alone', () => {
    expect(discordMarkdown('`a || b` then c || d')).toBe('`a || b` then c \\|\\| d');
    expect(discordMarkdown('one ` tick, x || y')).toBe('one ` tick, x \\|\\| y');
  });

  it('leaves an already escaped bar alone', () => {
    expect(discordMarkdown('\\|\\| and \\||')).toBe('\\|\\| and \\||');
  });

  it('turns __bold__ into **bold**, not inside words, code or snake_case names', () => {
    expect(discordMarkdown('This is __important__, really.')).toBe('This is **important**, really.');
    expect(discordMarkdown('snake__case__name and `__x__`')).toBe('snake__case__name and `__x__`');
    expect(discordMarkdown('__ not bold __')).toBe('__ not bold __');
  });

  it('passes text without either mark through byte for byte', () => {
    const text = 'Plain **bold** _it_ | a table-ish | line\n\n> quote';
    expect(discordMarkdown(text)).toBe(text);
  });

  it('still rewrites a table, then leaves the code block it became alone', () => {
    const out = discordMarkdown('| a | b |\n|---|---|\n| x || y |\n\nthen p || q');
    expect(out).toContain('```');
    expect(out.endsWith('then p \\|\\| q')).toBe(true);
  });
});
