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

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

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
      const marker = fence[1]!;
      const code: CodeBlock = { kind: 'code', open: line.trimStart(), close: marker, lines: [] };
      for (i++; i < lines.length; i++) {
        const l = lines[i]!;
        const m = FENCE.exec(l);
        if (m && m[1]![0] === marker[0] && m[1]!.length >= marker.length && m[2]!.trim() === '') break;
        code.lines.push(l);
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
