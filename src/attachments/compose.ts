import { extensionOf } from './text-like.js';

/** A file read as text, ready to append. */
export interface TextFile {
  name: string;
  text: string;
}

/** A file that was not sent, and why (for the one-line notice). */
export interface SkippedFile {
  name: string;
  reason: 'not_text' | 'too_large' | 'unreadable' | 'no_room';
}

/** Fence languages worth naming; the rest use the extension as is when it is a plain word. */
const FENCE_LANG: Record<string, string> = { md: 'markdown', yml: 'yaml', py: 'python', rb: 'ruby', ts: 'typescript', js: 'javascript', sh: 'bash' };

/** A backtick fence longer than any run of backticks in the content, so the block cannot end early. */
function fenceFor(content: string): string {
  let longest = 0;
  for (const run of content.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return '`'.repeat(Math.max(3, longest + 1));
}

function block(name: string, content: string, note: string): string {
  const ext = extensionOf(name);
  const lang = FENCE_LANG[ext] ?? (/^[a-z0-9+#-]{1,15}$/.test(ext) && ext !== name.toLowerCase() ? ext : '');
  const fence = fenceFor(content);
  const body = content.endsWith('\n') ? content : `${content}\n`;
  return `\n\n${safeName(name)}:\n${fence}${lang}\n${body}${fence}${note}`;
}

/** Names go into the agent's text and a one-line notice: one line, bounded. */
function safeName(name: string): string {
  const flat = name.replace(/[\r\n\t`]+/g, ' ').trim() || 'file';
  return flat.length > 120 ? `${flat.slice(0, 119)}…` : flat;
}

/**
 * Appends each file to the message as a fenced block headed by its name, keeping the whole
 * within `maxChars` (MAX_MESSAGE_CHARS). A file that does not fit is cut with a note saying so;
 * files with no room left at all come back in `skipped` (reason `no_room`).
 */
export function appendFiles(text: string, files: TextFile[], maxChars: number): { text: string; skipped: SkippedFile[] } {
  let out = text;
  const skipped: SkippedFile[] = [];
  for (const file of files) {
    const full = block(file.name, file.text, '');
    if (out.length + full.length <= maxChars) {
      out += full;
      continue;
    }
    const note = `\n(${safeName(file.name)} was cut here: the message may hold at most ${maxChars} characters.)`;
    const overhead = block(file.name, '', note).length;
    const room = maxChars - out.length - overhead;
    // Fewer than 200 characters of a file help nobody; say it was left out instead.
    if (room < 200) {
      skipped.push({ name: file.name, reason: 'no_room' });
      continue;
    }
    let cut = file.text.slice(0, room);
    const lastNewline = cut.lastIndexOf('\n');
    if (lastNewline > room / 2) cut = cut.slice(0, lastNewline + 1);
    out += block(file.name, cut, note);
  }
  return { text: out, skipped };
}

const REASON_WORDS: Record<SkippedFile['reason'], string> = {
  not_text: 'only text files are sent',
  too_large: 'too large',
  unreadable: 'could not be read',
  no_room: 'no room left in the message',
};

/**
 * The one line telling the user which files the agent did not get, e.g.
 * "Not sent to the agent: photo.png (only text files are sent), big.log (too large, over 100 KB)."
 * Undefined when nothing was skipped.
 */
export function notSentNotice(skipped: SkippedFile[], maxBytes: number): string | undefined {
  if (skipped.length === 0) return undefined;
  const kb = Math.round(maxBytes / 1000);
  const parts = skipped.slice(0, 10).map((f) => {
    const why = f.reason === 'too_large' ? `too large, over ${kb} KB` : REASON_WORDS[f.reason];
    return `${safeName(f.name)} (${why})`;
  });
  const more = skipped.length > 10 ? ` and ${skipped.length - 10} more` : '';
  return `Not sent to the agent: ${parts.join(', ')}${more}.`;
}
