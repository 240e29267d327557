/**
 * Splits Markdown into messages of at most `maxChars` characters, for platforms that cap
 * message length. Breaks fall on paragraph and code-fence boundaries where possible; a code
 * block that must be split is closed at the end of one message and reopened (same info
 * string) at the start of the next, so no message leaves a fence open.
 */
export function splitMarkdown(text: string, maxChars: number): string[] {
  if (maxChars < 20) throw new RangeError('maxChars must be at least 20');
  const chunks: string[] = [];
  let current = '';
  const flush = () => {
    if (current.trim()) chunks.push(current);
    current = '';
  };
  for (const block of parseBlocks(text)) {
    const rendered = renderBlock(block);
    const joined = current ? `${current}\n\n${rendered}` : rendered;
    if (joined.length <= maxChars) {
      current = joined;
      continue;
    }
    flush();
    if (rendered.length <= maxChars) {
      current = rendered;
      continue;
    }
    const pieces = block.kind === 'code' ? splitCode(block, maxChars) : splitText(block.lines.join('\n'), maxChars);
    for (const piece of pieces.slice(0, -1)) chunks.push(piece);
    current = pieces.at(-1) ?? '';
  }
  flush();
  return chunks;
}

interface TextBlock {
  kind: 'text';
  lines: string[];
}
interface CodeBlock {
  kind: 'code';
  open: string;
  close: string;
  lines: string[];
}
type Block = TextBlock | CodeBlock;

/**
 * A fence line: its prefix (up to three spaces at the top level; deeper indentation inside a
 * list item; `> ` inside a quote), its marker and the rest (the info string).
 */
const FENCE = /^([ \t]*(?:>[ \t]?)*)(`{3,}|~{3,})(.*)$/;

/** A top-level fence: no prefix but up to three spaces (any such closer closes it). */
const topLevel = (prefix: string) => /^ {0,3}$/.test(prefix);

function parseBlocks(text: string): Block[] {
  const blocks: Block[] = [];
  let para: string[] = [];
  const endParagraph = () => {
    if (para.length) blocks.push({ kind: 'text', lines: para });
    para = [];
  };
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = FENCE.exec(line);
    if (fence) {
      endParagraph();
      const [, prefix, marker] = fence as unknown as [string, string, string];
      // A nested fence keeps its prefix when it is closed and reopened around a split.
      const nested = !topLevel(prefix);
      const code: CodeBlock = { kind: 'code', open: nested ? line : line.trimStart(), close: nested ? `${prefix}${marker}` : marker, lines: [] };
      const start = i;
      let closed = false;
      for (i++; i < lines.length; i++) {
        const l = lines[i]!;
        const m = FENCE.exec(l);
        const samePlace = m && (nested ? m[1] === prefix : topLevel(m[1]!));
        if (m && samePlace && m[2]![0] === marker[0] && m[2]!.length >= marker.length && m[3]!.trim() === '') {
          closed = true;
          break;
        }
        code.lines.push(l);
      }
      if (nested && !closed) {
        // Never closed at its own depth: not a fence after all (an indented line that looks like one).
        i = start;
        para.push(line);
        continue;
      }
      blocks.push(code);
    } else if (line.trim() === '') {
      endParagraph();
    } else {
      para.push(line);
    }
  }
  endParagraph();
  return blocks;
}

function renderBlock(block: Block): string {
  return block.kind === 'code' ? [block.open, ...block.lines, block.close].join('\n') : block.lines.join('\n');
}

/** Code lines packed into fenced pieces; each piece is closed and the next reopened. */
function splitCode(block: CodeBlock, maxChars: number): string[] {
  const overhead = block.open.length + block.close.length + 2;
  const room = maxChars - overhead;
  if (room < 10) return splitText(renderBlock(block), maxChars);
  const pieces: string[] = [];
  let body: string[] = [];
  let size = 0;
  const flush = () => {
    pieces.push([block.open, ...body, block.close].join('\n'));
    body = [];
    size = 0;
  };
  for (const line of block.lines) {
    for (const part of hardWrap(line, room)) {
      const added = (body.length ? 1 : 0) + part.length;
      if (size + added > room && body.length) flush();
      size += (body.length ? 1 : 0) + part.length;
      body.push(part);
    }
  }
  if (body.length || pieces.length === 0) flush();
  return pieces;
}

/** Prose split at line, then word boundaries, then anywhere. */
function splitText(text: string, maxChars: number): string[] {
  const pieces: string[] = [];
  let current = '';
  for (const unit of text.split(/(?<=\n)|(?<= )/)) {
    for (const part of hardWrap(unit, maxChars)) {
      if (current.length + part.length > maxChars) {
        pieces.push(current.trimEnd());
        current = '';
      }
      current += part;
    }
  }
  if (current.trim()) pieces.push(current.trimEnd());
  return pieces.filter((p) => p.length > 0);
}

function hardWrap(line: string, width: number): string[] {
  if (line.length <= width) return [line];
  const parts: string[] = [];
  // Array.from keeps surrogate pairs (emoji) whole.
  const chars = Array.from(line);
  let part = '';
  for (const ch of chars) {
    if (part.length + ch.length > width) {
      parts.push(part);
      part = '';
    }
    part += ch;
  }
  if (part) parts.push(part);
  return parts;
}
