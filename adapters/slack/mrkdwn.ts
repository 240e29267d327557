import { Lexer, type Token, type Tokens } from 'marked';
import { tableAsCodeBlocks } from '../../src/render/table-columns.js';
import { breakBroadcastWords, decodeEntities, escapeSlackText, safeLinkTarget } from './escape.js';
import { encodeHiddenInBareUrls, misleadingLabel, shownTarget, withoutBidiControls } from '../../src/render/link-labels.js';

/**
 * Converts the agent's Markdown (CommonMark + GFM) into Slack mrkdwn. `marked` parses; this
 * file only prints its tokens the way Slack writes them: `*bold*`, `_italic_`, `~strike~`,
 * `<url|label>`, fenced code without a language, bullets as text, tables as code blocks.
 * Every piece of text is escaped, so nothing in the output can ping anyone.
 */
export function markdownToMrkdwn(markdown: string): string {
  const tokens = Lexer.lex(String(markdown ?? ''), { gfm: true, breaks: false });
  return renderBlocks(tokens, 0).replace(/\n{3,}/g, '\n\n').trim();
}

interface Inline {
  bold?: boolean;
  italic?: boolean;
  strike?: boolean;
}

const BULLETS = ['•', '◦', '▪'];

function text(raw: string): string {
  return breakBroadcastWords(escapeSlackText(encodeHiddenInBareUrls(decodeEntities(raw))));
}

/** Code keeps its characters, but three backticks inside would end Slack's fence early. */
function codeText(raw: string): string {
  return escapeSlackText(raw).replace(/```/g, '``\u200B`');
}

function renderBlocks(tokens: Token[], depth: number): string {
  return tokens
    .map((t) => renderBlock(t, depth))
    .filter((s) => s.trim() !== '')
    .join('\n\n');
}

function renderBlock(token: Token, depth: number): string {
  const t = token as Tokens.Generic;
  switch (t.type) {
    case 'space':
    case 'def':
      return '';
    case 'paragraph':
      return renderInline((t as Tokens.Paragraph).tokens, {});
    case 'text': {
      const tt = t as Tokens.Text;
      return tt.tokens ? renderInline(tt.tokens, {}) : text(tt.text);
    }
    case 'heading':
      return `*${renderInline((t as Tokens.Heading).tokens, { bold: true })}*`;
    case 'code': {
      const body = codeText((t as Tokens.Code).text.replace(/\n+$/, ''));
      return `\`\`\`\n${body}\n\`\`\``;
    }
    case 'blockquote':
      return renderBlocks((t as Tokens.Blockquote).tokens, depth)
        .split('\n')
        .map((line) => `> ${line}`)
        .join('\n');
    case 'list':
      return renderList(t as Tokens.List, depth);
    case 'hr':
      return '──────────';
    case 'table':
      return renderTable(t as Tokens.Table);
    case 'html':
      return text((t as Tokens.HTML).text.trim());
    default:
      return text(String(t.raw ?? ''));
  }
}

function renderList(list: Tokens.List, depth: number): string {
  const start = typeof list.start === 'number' ? list.start : 1;
  return list.items
    .map((item, i) => {
      const marker = list.ordered ? `${start + i}.` : (BULLETS[depth % BULLETS.length] ?? '•');
      const box = item.task ? (item.checked ? '☑ ' : '☐ ') : '';
      const body = item.tokens
        .filter((t) => t.type !== 'checkbox')
        .map((t) => (t.type === 'list' ? renderList(t as Tokens.List, depth + 1) : renderBlock(t, depth + 1)))
        .filter((s) => s.trim() !== '')
        .join('\n');
      const pad = ' '.repeat(marker.length + 1);
      const [first = '', ...rest] = body.split('\n');
      return [`${marker} ${box}${first}`, ...rest.map((l) => (l ? pad + l : l))].join('\n');
    })
    .join('\n');
}

/**
 * Slack has no tables: columns in code blocks (`tableAsCodeBlocks`), cut below a message's length
 * (SLACK_CHUNK_CHARS, 3,800, less room for a quote's `> ` on each line) with the header repeated.
 */
function renderTable(table: Tokens.Table): string {
  const cell = (c: Tokens.TableCell) => plain(c.tokens).replace(/\s+/g, ' ').trim();
  return tableAsCodeBlocks([table.header.map(cell), ...table.rows.map((r) => r.map(cell))], TABLE_BLOCK_CHARS, codeText);
}

const TABLE_BLOCK_CHARS = 3_000;

/** The visible text of inline tokens, without formatting. */
function plain(tokens: Token[] | undefined): string {
  return (tokens ?? [])
    .map((token) => {
      const t = token as Tokens.Generic;
      if (t.type === 'br') return ' ';
      if (Array.isArray(t.tokens)) return plain(t.tokens as Token[]);
      if (t.type === 'text' || t.type === 'escape' || t.type === 'codespan') return decodeEntities(String(t.text ?? ''));
      return String(t.text ?? t.raw ?? '');
    })
    .join('');
}

/** A letter, digit or combining mark: next to one, Slack does not read `*`, `_` or `~` as formatting. */
const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;
const ZWSP = '\u200B';

/**
 * Inline tokens printed in order. Slack formats `*bold*` only at word boundaries (`*foo*bar`
 * and CJK text such as `这是*重要*的` show their asterisks), so a span that opens or closes
 * against a letter gets a zero-width space on that side, as slackify-markdown does.
 */
function renderInline(tokens: Token[] | undefined, ctx: Inline): string {
  const parts = (tokens ?? []).map((t) => ({ out: renderInlineToken(t, ctx), marked: opensSpan(t, ctx) }));
  return parts
    .map(({ out, marked }, i) => {
      if (!marked) return out;
      const before = parts[i - 1]?.out.at(-1) ?? '';
      const after = parts[i + 1]?.out[0] ?? '';
      return `${WORD_CHAR.test(before) ? ZWSP : ''}${out}${WORD_CHAR.test(after) ? ZWSP : ''}`;
    })
    .join('');
}

/** Whether the token prints its own `*`, `_` or `~` markers (not when an outer span already has them). */
function opensSpan(token: Token, ctx: Inline): boolean {
  return (token.type === 'strong' && !ctx.bold) || (token.type === 'em' && !ctx.italic) || (token.type === 'del' && !ctx.strike);
}

function renderInlineToken(token: Token, ctx: Inline): string {
  const t = token as Tokens.Generic;
  switch (t.type) {
    case 'text': {
      const tt = t as Tokens.Text;
      return tt.tokens ? renderInline(tt.tokens, ctx) : text(tt.text);
    }
    case 'escape':
      return escapeSlackText((t as Tokens.Escape).text);
    case 'strong': {
      const inner = renderInline((t as Tokens.Strong).tokens, { ...ctx, bold: true });
      return ctx.bold ? inner : `*${inner}*`;
    }
    case 'em': {
      const inner = renderInline((t as Tokens.Em).tokens, { ...ctx, italic: true });
      return ctx.italic ? inner : `_${inner}_`;
    }
    case 'del': {
      const inner = renderInline((t as Tokens.Del).tokens, { ...ctx, strike: true });
      return ctx.strike ? inner : `~${inner}~`;
    }
    case 'codespan':
      return `\`${escapeSlackText(decodeEntities((t as Tokens.Codespan).text)).replace(/`/g, "'")}\``;
    case 'br':
      return '\n';
    case 'link':
    case 'image': {
      const link = t as Tokens.Link | Tokens.Image;
      const shown = plain(link.tokens).trim() || link.href;
      const label = withoutBidiControls(shown);
      const target = safeLinkTarget(link.href);
      if (!target) return text(label);
      if (label === link.href || shown === link.href) return `<${target}>`;
      // The reply may be an attacker's: a label naming another address than the link opens is
      // shown as text, with the real target after it (src/render/link-labels.ts).
      if (misleadingLabel(shown, link.href)) return `${text(label)} (<${safeLinkTarget(shownTarget(link.href)) ?? target}>)`;
      return `<${target}|${text(label).replace(/\|/g, '¦')}>`;
    }
    case 'html':
      return text((t as Tokens.HTML).text);
    default:
      return text(String(t.raw ?? ''));
  }
}
