/**
 * A Markdown table as a chat platform can show it (neither Slack nor Discord renders tables):
 * columns padded to width, at most 40 characters each, inside a code block. A table longer than
 * one message is cut into blocks of whole rows, each starting with the header row, so that every
 * message reads alone; blocks are separated by a blank line, where the message splitter cuts.
 *
 * `rows[0]` is the header. `escape` is applied to the code text (Slack's `&`, `<`, `>`), and
 * sizes count the escaped text.
 */
export function tableAsCodeBlocks(rows: string[][], maxChars: number, escape: (text: string) => string = (s) => s): string {
  const header = rows[0] ?? [];
  const widths = header.map((_, col) => Math.min(MAX_COLUMN, Math.max(...rows.map((r) => Array.from(r[col] ?? '').length))));
  const line = (r: string[]) =>
    r
      .map((c, col) => c + ' '.repeat(Math.max(0, (widths[col] ?? 0) - Array.from(c).length)))
      .join(' | ')
      .trimEnd();
  const head = [line(header), widths.map((w) => '-'.repeat(Math.max(1, w))).join('-+-')].map(escape);
  const block = (lines: string[]) => ['```', ...head, ...lines, '```'].join('\n');
  const blocks: string[][] = [[]];
  // The fences, the header and the line breaks around each row.
  let size = block([]).length;
  for (const row of rows.slice(1).map((r) => escape(line(r)))) {
    const current = blocks[blocks.length - 1]!;
    if (current.length > 0 && size + row.length + 1 > maxChars) {
      blocks.push([row]);
      size = block([]).length + row.length + 1;
    } else {
      current.push(row);
      size += row.length + 1;
    }
  }
  return blocks.map(block).join('\n\n');
}

const MAX_COLUMN = 40;
