import type { KnownBlock } from '@slack/web-api';
import type { CommandReply } from '../../src/commands/types.js';
import { breakBroadcastWords, escapeSlackText } from './escape.js';

/** Slack's limit on a section's text. */
const SECTION_CHARS = 3_000;
/** Slack's limit on blocks per message. */
const MAX_BLOCKS = 50;
/**
 * Text of all blocks of one answer. Slack documents 40,000 characters for a message, but refuses
 * blocks past about 13,000 characters in all (`msg_blocks_too_long`, slackapi/bolt-js#2509), so
 * a long answer (hundreds of instances) is cut below that, with a note, rather than lost.
 */
const MAX_BLOCKS_CHARS = 12_000;

export interface SlackMessageBody {
  /** Fallback for notifications and clients without Block Kit. */
  text: string;
  blocks: KnownBlock[];
}

/** Command text is mrkdwn already (`code` in backticks); only `&`, `<`, `>` need escaping. */
function safe(text: string): string {
  return breakBroadcastWords(escapeSlackText(String(text ?? '')));
}

function section(text: string): KnownBlock {
  return { type: 'section', text: { type: 'mrkdwn', text } };
}

/** Lines packed into sections of at most SECTION_CHARS, split between lines (or inside one too long). */
function packSections(lines: string[], wrap: (body: string) => string = (b) => b, overhead = 0): KnownBlock[] {
  const room = SECTION_CHARS - overhead;
  const out: KnownBlock[] = [];
  let current: string[] = [];
  let size = 0;
  const flush = () => {
    const body = current.join('\n');
    if (body.trim()) out.push(section(wrap(body)));
    current = [];
    size = 0;
  };
  for (const raw of lines) {
    for (let i = 0; i < Math.max(1, raw.length); i += room) {
      const line = raw.slice(i, i + room);
      if (size + line.length + 1 > room) flush();
      current.push(line);
      size += line.length + 1;
    }
  }
  flush();
  return out;
}

function tableLines(table: NonNullable<CommandReply['table']>): string[] {
  const rows = [table.columns, ...table.rows].map((r) => r.map((c) => String(c ?? '').replace(/\s+/g, ' ').replace(/`/g, "'")));
  const widths = table.columns.map((_, i) => Math.min(40, Math.max(...rows.map((r) => Array.from(r[i] ?? '').length))));
  const line = (r: string[]) =>
    r
      .map((c, i) => c + ' '.repeat(Math.max(0, (widths[i] ?? 0) - Array.from(c).length)))
      .join('  ')
      .trimEnd();
  return [line(rows[0]!), ...rows.slice(1).map(line)].map(safe);
}

/** A platform-neutral command answer as Block Kit: a bold title, the lines, the table as code. */
export function commandReplyMessage(reply: CommandReply): SlackMessageBody {
  const title = `${reply.ok ? '' : ':warning: '}*${safe(reply.title).replace(/\*/g, '')}*`;
  const blocks: KnownBlock[] = [section(title.slice(0, SECTION_CHARS))];
  blocks.push(...packSections(reply.lines.map(safe)));
  const tableFrom = blocks.length;
  if (reply.table && reply.table.rows.length > 0) {
    blocks.push(...packSections(tableLines(reply.table), (b) => `\`\`\`\n${b}\n\`\`\``, 8));
  }
  const fit = fitting(blocks);
  if (fit < blocks.length) {
    // The table's sections kept: their lines, less the header, are the rows shown.
    const shownLines = blocks.slice(tableFrom, Math.max(tableFrom, fit)).reduce((n, b) => n + textOf(b).split('\n').length - 2, 0);
    const rows = reply.table?.rows.length ?? 0;
    blocks.length = fit;
    const note = fit > tableFrom && rows > 0 ? `…${rows - Math.max(0, shownLines - 1)} of ${rows} rows left out to fit in one message.` : '…more was left out to fit in one message.';
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: note }] });
  }
  const fallback = [reply.title, ...reply.lines].join('\n');
  return { text: safe(fallback).slice(0, SECTION_CHARS), blocks };
}

function textOf(b: KnownBlock): string {
  const t = (b as { text?: unknown }).text;
  if (typeof t === 'string') return t;
  return t && typeof t === 'object' && typeof (t as { text?: unknown }).text === 'string' ? (t as { text: string }).text : '';
}

/** How many blocks go in one message, leaving room for a closing note when not all fit. */
function fitting(blocks: KnownBlock[]): number {
  const total = blocks.reduce((n, b) => n + textOf(b).length, 0);
  if (blocks.length <= MAX_BLOCKS && total <= MAX_BLOCKS_CHARS) return blocks.length;
  let chars = 0;
  for (let i = 0; i < blocks.length; i++) {
    chars += textOf(blocks[i]!).length;
    if (chars > MAX_BLOCKS_CHARS - 100 || i >= MAX_BLOCKS - 1) return Math.max(1, i);
  }
  return blocks.length;
}

/** An ephemeral answer for `respond()` (slash commands). */
export function ephemeral(reply: CommandReply) {
  return { response_type: 'ephemeral' as const, replace_original: false, ...commandReplyMessage(reply) };
}
