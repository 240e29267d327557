import { escapeSlackText } from './escape.js';
import { richTextToSlackText } from './rich-text.js';
import { slackTextToPlain } from './slack-text.js';

type Json = Record<string, unknown>;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.filter((e): e is Json => !!e && typeof e === 'object') : []);

/** Most characters read out of one message (the ingress cuts a long message anyway). */
const MAX_CHARS = 100_000;
/** Most attachments read per message (Slack shows at most 100; a share carries one). */
const MAX_ATTACHMENTS = 20;

/** The parts of a Slack message that carry what it shows: an event, a shortcut's message, a read-back. */
export interface SlackMessageContent {
  text?: unknown;
  blocks?: unknown;
  attachments?: unknown;
}

/**
 * A text object of a block (`{ type: 'mrkdwn' | 'plain_text', text }`) as Slack markup:
 * plain text is escaped, so `<`, `>` and `&` in it stay characters.
 */
function textObject(o: unknown): string {
  if (!o || typeof o !== 'object') return '';
  const t = o as Json;
  return t.type === 'plain_text' ? escapeSlackText(str(t.text)) : str(t.text);
}

/** Block types other than `rich_text` that show text. */
const TEXT_BLOCKS = new Set(['section', 'header', 'context', 'markdown', 'table']);

/** A `table` block (at most 100 rows of 20 cells, `raw_text` or `rich_text`): one line per row, cells between ` | `. */
function tableText(rows: unknown): string {
  return (Array.isArray(rows) ? rows : [])
    .slice(0, 100)
    .map((row) =>
      list(row)
        .slice(0, 20)
        .map((cell) => (cell.type === 'rich_text' ? richTextToSlackText([cell]).replace(/\n/g, ' ') : escapeSlackText(str(cell.text))))
        .join(' | '),
    )
    .filter((line) => line.replace(/[ |]/g, ''))
    .join('\n');
}

/**
 * The Slack markup of what a message's blocks show: `rich_text` (see rich-text.ts), `section`
 * (text and fields), `header`, `context` (its text elements), `table` and `markdown`. Others (images,
 * buttons, dividers) show no text to read.
 */
export function blocksToSlackText(blocks: unknown): string {
  const parts = list(blocks).map((b) => {
    switch (b.type) {
      case 'rich_text':
        return richTextToSlackText([b]);
      case 'section':
        return [textObject(b.text), ...list(b.fields).map(textObject)].filter(Boolean).join('\n');
      case 'header':
        return textObject(b.text);
      case 'context':
        return list(b.elements).map(textObject).filter(Boolean).join(' ');
      case 'table':
        return tableText(b.rows);
      // Standard Markdown, not Slack markup: its `<` and `>` are characters.
      case 'markdown':
        return escapeSlackText(str(b.text));
      default:
        return '';
    }
  });
  return parts.filter((p) => p.trim()).join('\n').slice(0, MAX_CHARS);
}

/**
 * The message's own words: its `text`, or, when it has none or its blocks hold more than rich
 * text (an app's `section`s, where `text` is only the notification fallback), its blocks.
 * Mentions are read from this, never from what it forwards.
 */
export function ownText(m: SlackMessageContent): string {
  const text = str(m.text);
  const blocks = list(m.blocks);
  const appLayout = blocks.some((b) => TEXT_BLOCKS.has(str(b.type)));
  if (text.trim() && !appLayout) return text;
  return blocksToSlackText(blocks) || text;
}

/** A forwarded (shared) message, or a message a pasted link unfurled: Slack shows it quoted. */
function isSharedMessage(a: Json): boolean {
  return a.is_share === true || a.is_msg_unfurl === true;
}

function quoted(text: string): string {
  return text
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n');
}

/** A shared message's text: its `text`, else its `message_blocks` (the original's blocks), else the fallback. */
function sharedText(a: Json): string {
  const fromBlocks = () =>
    list(a.message_blocks)
      .map((mb) => blocksToSlackText((mb.message as Json | undefined)?.blocks))
      .filter(Boolean)
      .join('\n');
  return str(a.text).trim() || fromBlocks() || str(a.fallback);
}

/** A legacy attachment as shown: pretext, title, text (or its fallback), fields as `title: value`. */
function legacyText(a: Json): string {
  const title = str(a.title) && str(a.title_link) ? `<${str(a.title_link)}|${str(a.title)}>` : str(a.title);
  const fields = list(a.fields).map((f) => [str(f.title), str(f.value)].filter(Boolean).join(': '));
  const body = str(a.text) || blocksToSlackText(a.blocks) || (fields.length === 0 && !title ? str(a.fallback) : '');
  return [str(a.pretext), title, body, ...fields].filter((p) => p.trim()).join('\n');
}

/** One attachment's part of what a message shows; `shared`: a forwarded (or linked) message. */
interface AttachmentPart {
  text: string;
  shared: boolean;
}

function attachmentParts(attachments: unknown): AttachmentPart[] {
  return list(attachments)
    .slice(0, MAX_ATTACHMENTS)
    .flatMap((a): AttachmentPart[] => {
      if (isSharedMessage(a)) {
        const text = sharedText(a);
        if (!text.trim()) return [];
        // A share without the author's name still has their ID: as a mention, the people directory names it.
        const name = str(a.author_name) || str(a.author_subname);
        const authorId = /^[UW][A-Z0-9]{2,20}$/.test(str(a.author_id)) ? str(a.author_id) : '';
        const author = name ? escapeSlackText(name) : authorId ? `<@${authorId}>` : '';
        // Some forwards carry only `is_msg_unfurl` (as a pasted message link does): "shared" is true of both.
        const what = a.is_share === true ? 'Forwarded message' : 'Shared message';
        return [{ text: `${what}${author ? ` from ${author}` : ''}:\n${quoted(text)}`, shared: true }];
      }
      if (str(a.from_url) || a.is_app_unfurl === true) return [];
      const text = legacyText(a);
      return text.trim() ? [{ text, shared: false }] : [];
    });
}

/**
 * What the attachments of a message show, as Slack markup, one part each: a forwarded message
 * marked as forwarded (with its author) and quoted; an app's legacy attachment as its text. A
 * link preview Slack unfurled from a URL in the text (`from_url`, not a message) is left out:
 * the URL is already in the text, and the page's words are not the sender's.
 */
export function attachmentsToSlackText(attachments: unknown): string[] {
  return attachmentParts(attachments).map((p) => p.text);
}

/**
 * What a message shows in two parts, as Slack markup: what its sender says (its own words and an
 * app's legacy attachments) and the messages it forwards, after them. Only the forwards may be
 * shortened to fit the bridge's limit (see fitForwarded).
 */
export function shownParts(m: SlackMessageContent): { own: string; forwarded: string } {
  const parts = attachmentParts(m.attachments);
  const join = (texts: string[]) =>
    texts
      .filter((p) => p.trim())
      .join('\n\n')
      .slice(0, MAX_CHARS);
  return {
    own: join([ownText(m), ...parts.filter((p) => !p.shared).map((p) => p.text)]),
    forwarded: join(parts.filter((p) => p.shared).map((p) => p.text)),
  };
}

/**
 * A message's own words and its forwards as plain text for the agent, forwards last, with
 * `ownChars` (the length of the first) when there are forwards.
 */
export function plainWithForwards(m: SlackMessageContent, botUserId: string): { text: string; ownChars?: number } {
  const { own, forwarded } = shownParts(m);
  const ownPlain = slackTextToPlain(own, botUserId);
  const forwardedPlain = slackTextToPlain(forwarded, botUserId);
  if (!forwardedPlain) return { text: ownPlain };
  if (!ownPlain) return { text: forwardedPlain, ownChars: 0 };
  return { text: `${ownPlain}\n\n${forwardedPlain}`, ownChars: ownPlain.length };
}

/**
 * The files a message carries: its own `files`, then those of the messages it forwards (a share
 * keeps the original's files in its attachment, not in the message's `files`). Undefined when none.
 */
export function filesOf(m: { files?: unknown; attachments?: unknown }): unknown[] | undefined {
  const own = Array.isArray(m.files) ? m.files : [];
  const forwarded = list(m.attachments)
    .slice(0, MAX_ATTACHMENTS)
    .filter(isSharedMessage)
    .flatMap((a) => (Array.isArray(a.files) ? (a.files as unknown[]) : []));
  const all = [...own, ...forwarded];
  return all.length > 0 ? all : undefined;
}

/**
 * Everything a Slack message shows, as Slack markup (for slackTextToPlain): its own words
 * ({@link ownText}), then its attachments ({@link attachmentsToSlackText}). An app's message
 * often has an empty `text` and everything in blocks or legacy attachments; a forwarded
 * message keeps the forwarded words in an attachment. Reused wherever a message is read.
 */
export function shownText(m: SlackMessageContent): string {
  return [ownText(m), ...attachmentsToSlackText(m.attachments)]
    .filter((p) => p.trim())
    .join('\n\n')
    .slice(0, MAX_CHARS);
}

/**
 * For a message read back as context (a thread's earlier messages): the names of the files it
 * shows, as one line, since only the message being answered has its files read. '' when none.
 */
export function filesNote(m: { files?: unknown; attachments?: unknown }): string {
  const names = (filesOf(m) ?? []).flatMap((f) => {
    const file = (f && typeof f === 'object' ? f : {}) as Json;
    const name = str(file.name) || str(file.title);
    return name ? [escapeSlackText(name.slice(0, 200))] : [];
  });
  if (names.length === 0) return '';
  const shown = names.slice(0, 10).join(', ') + (names.length > 10 ? ` and ${names.length - 10} more` : '');
  return `[shared ${names.length === 1 ? 'a file' : 'files'}: ${shown}]`;
}

/** A message read back as context: what it shows, and the names of its files. */
export function contextText(m: SlackMessageContent & { files?: unknown }): string {
  return [shownText(m), filesNote(m)].filter((p) => p.trim()).join('\n');
}
