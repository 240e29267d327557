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
    // Blocks keep the separation they had: a quote or list item whose code fence follows its
    // text directly stays one quote or item (a blank line inserted there splits it in two).
    const joined = current ? `${current}${block.gap}${rendered}` : rendered;
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
  /** What separated it from the block before: a line break, or a blank line. */
  gap: string;
  lines: string[];
}
interface CodeBlock {
  kind: 'code';
  gap: string;
  open: string;
  close: string;
  lines: string[];
}
type Block = TextBlock | CodeBlock;

/**
 * A fence line: its prefix (up to three spaces at the top level; deeper indentation inside a
 * list item; `> ` inside a quote), its marker and the rest (the info string).
 */
export const FENCE = /^([ \t]*(?:>[ \t]?)*)(`{3,}|~{3,})(.*)$/;

/** A top-level fence: no prefix but up to three spaces (any such closer closes it). */
const topLevel = (prefix: string) => /^ {0,3}$/.test(prefix);

function parseBlocks(text: string): Block[] {
  const blocks: Block[] = [];
  let para: string[] = [];
  let blank = true;
  const gap = () => {
    const seen = blank;
    blank = false;
    return seen ? '\n\n' : '\n';
  };
  const endParagraph = () => {
    if (para.length) blocks.push({ kind: 'text', gap: gap(), lines: para });
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
      // Its indentation is kept (a fence under a list item, indented two spaces, belongs to the item).
      const code: CodeBlock = { kind: 'code', gap: '', open: line, close: `${prefix}${marker}`, lines: [] };
      const start = i;
      let closed = false;
      for (i++; i < lines.length; i++) {
        const l = lines[i]!;
        const m = FENCE.exec(l);
        const samePlace = m && (nested ? m[1] === prefix : topLevel(m[1]!));
        if (m && samePlace && m[2]![0] === marker[0] && m[2]!.length >= marker.length && m[3]!.trim() === '') {
          closed = true;
          if (!nested) code.close = l.trimEnd();
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
      blocks.push({ ...code, gap: gap() });
    } else if (line.trim() === '') {
      endParagraph();
      blank = true;
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

/**
 * Prose split at line boundaries first: a list or a quote longer than a message is cut between
 * its lines, so every message starts at an item or a quoted line. Only a line longer than a
 * message is cut between words (never inside an inline code span or a `[label](url)` link that
 * fits a message), then anywhere; a quoted line's pieces all keep its `> ` marker.
 */
function splitText(text: string, maxChars: number): string[] {
  const pieces: string[] = [];
  let current = '';
  const flush = () => {
    if (current.trim()) pieces.push(current.trimEnd());
    current = '';
  };
  for (const line of text.split('\n')) {
    const joined = current ? `${current}\n${line}` : line;
    if (joined.length <= maxChars) {
      current = joined;
      continue;
    }
    flush();
    if (line.length <= maxChars) {
      current = line;
      continue;
    }
    const parts = splitLine(line, maxChars);
    for (const part of parts.slice(0, -1)) if (part.trim()) pieces.push(part.trimEnd());
    current = parts.at(-1) ?? '';
  }
  flush();
  return pieces;
}

/** A quote marker (`> `, `>> `) a line's continuation pieces repeat, so they stay quoted. */
const QUOTE = /^[ \t]{0,3}(?:>[ \t]?)+/;

/** One line longer than `maxChars`, cut between words; its pieces after the first repeat its quote marker. */
function splitLine(line: string, maxChars: number): string[] {
  const marker = QUOTE.exec(line)?.[0] ?? '';
  const prefix = marker && marker.length <= maxChars / 4 ? marker : '';
  const pieces: string[] = [];
  let current = '';
  for (const unit of wordUnits(line, maxChars - prefix.length)) {
    for (const part of hardWrap(unit, maxChars - prefix.length)) {
      if (current.length + part.length > maxChars && current.trim() !== prefix.trim()) {
        pieces.push(current.trimEnd());
        current = prefix;
        if (!part.trim()) break;
      }
      current += current === prefix ? part.trimStart() : part;
    }
  }
  if (current.trim() && current.trim() !== prefix.trim()) pieces.push(current);
  return pieces;
}

/** Inline code spans and links, whose spaces are not places to cut (a cut there breaks their rendering). */
const ATOMIC = /`[^`\n]+`|!?\[[^\]\n]*\]\((?:[^()\s]|\([^()\s]*\))*\)/g;

/** A line as words with their trailing spaces; an inline code span or link that fits `width` stays one unit. */
function wordUnits(line: string, width: number): string[] {
  const guarded: Array<[number, number]> = [];
  for (const m of line.matchAll(ATOMIC)) if (m[0].length <= width) guarded.push([m.index, m.index + m[0].length]);
  const units: string[] = [];
  let start = 0;
  for (let i = 0; i < line.length; i++) {
    if (line[i] !== ' ' || line[i + 1] === ' ') continue;
    if (guarded.some(([a, b]) => i > a && i < b - 1)) continue;
    units.push(line.slice(start, i + 1));
    start = i + 1;
  }
  if (start < line.length) units.push(line.slice(start));
  return units;
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** A word cut into pieces of at most `width`, never inside a user-perceived character (emoji with ZWJ or skin tone, flag, accent). */
function hardWrap(line: string, width: number): string[] {
  if (line.length <= width) return [line];
  const parts: string[] = [];
  let part = '';
  for (const { segment } of graphemes.segment(line)) {
    // A cluster longer than a piece (a letter under hundreds of combining marks) is cut by code point.
    for (const ch of segment.length > width ? Array.from(segment) : [segment]) {
      if (part.length + ch.length > width) {
        parts.push(part);
        part = '';
      }
      part += ch;
    }
  }
  if (part) parts.push(part);
  return parts;
}
