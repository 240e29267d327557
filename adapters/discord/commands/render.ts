import type { CommandReply } from '../../../src/commands/types.js';
import { splitMarkdown } from '../../../src/render/split-markdown.js';

const MAX_CHARS = 2000;
/** Longest cell shown in a table; longer values are cut with an ellipsis. */
const MAX_CELL = 40;
/** An answer longer than this many messages is cut (an ephemeral answer is for one person). */
const MAX_MESSAGES = 4;

function cell(value: string): string {
  const clean = Array.from(String(value).replace(/[\p{Cc}`]/gu, ' '));
  return clean.length > MAX_CELL ? `${clean.slice(0, MAX_CELL - 1).join('')}…` : clean.join('');
}

/** A table as a monospace code block: Discord has no table syntax. */
export function renderTable(table: NonNullable<CommandReply['table']>): string {
  const rows = [table.columns, ...table.rows].map((r) => r.map(cell));
  const widths = table.columns.map((_, i) => Math.max(...rows.map((r) => Array.from(r[i] ?? '').length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c + ' '.repeat(Math.max(0, (widths[i] ?? 0) - Array.from(c).length)))
      .join('  ')
      .trimEnd();
  const [head, ...body] = rows;
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return ['```', line(head ?? []), rule, ...body.map(line), '```'].join('\n');
}

/** A command's answer as Discord messages (Markdown), each within 2000 characters. */
export function renderCommandReply(reply: CommandReply): string[] {
  const parts = [`**${reply.title}**`];
  if (reply.lines.length > 0) parts.push(reply.lines.join('\n'));
  if (reply.table && reply.table.rows.length > 0) parts.push(renderTable(reply.table));
  const chunks = splitMarkdown(parts.join('\n\n'), MAX_CHARS);
  if (chunks.length <= MAX_MESSAGES) return chunks.length > 0 ? chunks : [`**${reply.title}**`.slice(0, MAX_CHARS)];
  return [...chunks.slice(0, MAX_MESSAGES - 1), `… and more (${chunks.length - MAX_MESSAGES + 1} more messages' worth, cut here).`];
}
