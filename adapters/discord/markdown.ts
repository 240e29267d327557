import { Lexer, type Token, type Tokens } from 'marked';
import { tableAsCodeBlocks } from '../../src/render/table-columns.js';
import { mapOutsideFences, unmaskMisleadingLinks } from '../../src/render/masked-links.js';
import { encodeHiddenInBareUrls } from '../../src/render/link-labels.js';

/**
 * The agent's Markdown as Discord shows it. Discord renders most Markdown itself, but not
 * tables (their pipes and dashes show as typed) nor headings past `###` (`#### Setup` shows its
 * hashes). Top-level tables become aligned columns in a code block and deeper headings bold
 * lines. Outside code, two marks Discord reads otherwise than CommonMark are rewritten
 * (`discordInline`), and so are masked links whose label shows another address than they open
 * (src/render/masked-links.ts); everything else is passed through byte for byte.
 */
export function discordMarkdown(markdown: string, maxChars = 2_000): string {
  return discordInline(blocksDiscordShows(String(markdown ?? '').replace(/\r\n?/g, '\n'), maxChars));
}

function blocksDiscordShows(source: string, maxChars: number): string {
  let tokens: Token[];
  try {
    tokens = Lexer.lex(source, { gfm: true, breaks: false });
  } catch {
    return source;
  }
  if (!tokens.some(rewritten)) return source;
  // Only rewrite when the tokens cover the text exactly, so nothing else can change.
  if (tokens.map((t) => t.raw).join('') !== source) return source;
  return tokens.map((t) => (rewritten(t) ? rewrite(t, maxChars) : t.raw)).join('');
}

function rewritten(token: Token): boolean {
  return token.type === 'table' || (token.type === 'heading' && (token as Tokens.Heading).depth > 3);
}

/** The replacement, ending with the line breaks the original token ended with. */
function rewrite(token: Token, maxChars: number): string {
  const trailing = /\n*$/.exec(token.raw)?.[0] ?? '';
  if (token.type === 'heading') return `**${(token as Tokens.Heading).text.trim()}**${trailing}`;
  return `${renderTable(token as Tokens.Table, maxChars)}${trailing}`;
}

/** Columns in code blocks, where Discord keeps them aligned, each within a message with the header. */
function renderTable(table: Tokens.Table, maxChars: number): string {
  const cell = (c: Tokens.TableCell) => plain(c.tokens).replace(/\s+/g, ' ').trim().replace(/`{3,}/g, (m) => "'".repeat(m.length));
  return tableAsCodeBlocks([table.header.map(cell), ...table.rows.map((r) => r.map(cell))], maxChars);
}

/** The visible text of inline tokens, without their Markdown. */
function plain(tokens: Token[] | undefined): string {
  return (tokens ?? [])
    .map((token) => {
      const t = token as Tokens.Generic;
      if (t.type === 'br') return ' ';
      if (Array.isArray(t.tokens)) return plain(t.tokens as Token[]);
      if (t.type === 'text' || t.type === 'escape' || t.type === 'codespan') return decode(String(t.text ?? ''));
      return String(t.text ?? t.raw ?? '');
    })
    .join('');
}

/** The few entities marked leaves in text tokens. */
function decode(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e] ?? _);
}

/**
 * Outside code: `||` is Discord's spoiler mark, so "a || b … c || d" would hide everything between
 * the pairs; it is escaped to show as typed. `__x__` is bold in the agent's CommonMark but an
 * underline on Discord; it becomes `**x**`. Fenced blocks and code spans are left as they are,
 * except that a misleading masked link is unmasked across code spans too: Discord shows code
 * inside a link's label (`[`https://bank.example`](https://evil.example)`).
 */
function discordInline(source: string): string {
  if (!source.includes('||') && !source.includes('__') && !source.includes('](') && !source.includes('://')) return source;
  return mapOutsideFences(source, (line) =>
    outsideCodeSpans(unmaskMisleadingLinks(line, showOnDiscord), (text) => encodeHiddenInBareUrls(text).replace(/(?<!\\)\|\|/g, '\\|\\|').replace(UNDERSCORE_STRONG, '**$1**')),
  );
}

/** An unmasked link: the label as text, the real target linked (`<…>`: no preview of it either). */
export const showOnDiscord = (label: string, target: string) => `${label} (<${target}>)`;

/** CommonMark's `__strong__`: not inside a word, no space just inside the marks. */
const UNDERSCORE_STRONG = /(?<![\p{L}\p{N}_\\])__(?=[^\s_])(.*?[^\s_\\])__(?![\p{L}\p{N}_])/gu;

/** `fix` applied to the parts of a line outside its code spans (a backtick run closed by one as long). */
function outsideCodeSpans(line: string, fix: (text: string) => string): string {
  let out = '';
  let from = 0;
  const runs = /`+/g;
  for (let run = runs.exec(line); run; run = runs.exec(line)) {
    const close = new RegExp(`(?<!\`)${run[0]}(?!\`)`, 'g');
    close.lastIndex = run.index + run[0].length;
    const end = close.exec(line);
    if (!end) continue;
    out += fix(line.slice(from, run.index)) + line.slice(run.index, end.index + end[0].length);
    from = end.index + end[0].length;
    runs.lastIndex = from;
  }
  return out + fix(line.slice(from));
}
