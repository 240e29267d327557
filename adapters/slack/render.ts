import { splitMrkdwn } from './split-mrkdwn.js';
import { markdownToMrkdwn } from './mrkdwn.js';
import { escapeSlackText, breakBroadcastWords } from './escape.js';

/**
 * Characters per posted message. Slack truncates `text` past 40,000 characters and advises
 * keeping messages near 4,000 so they render well; this leaves room under that advice.
 */
export const SLACK_CHUNK_CHARS = 3_800;

/** The agent's Markdown as mrkdwn messages, each within SLACK_CHUNK_CHARS, fences balanced. */
export function renderSlackReply(markdown: string, maxChars = SLACK_CHUNK_CHARS): string[] {
  const mrkdwn = markdownToMrkdwn(markdown);
  if (!mrkdwn.trim()) return [];
  // Cut as Markdown is (lines, then words, fences kept), but never inside a `<url|label>` link or an entity.
  return splitMrkdwn(mrkdwn, maxChars).flatMap((chunk) => (chunk.length <= maxChars ? [chunk] : hardSplit(chunk, maxChars)));
}

/** A plain-words notice from the core, escaped so it shows as written. */
export function renderNotice(text: string): string {
  const escaped = breakBroadcastWords(escapeSlackText(String(text ?? '').trim()));
  return escaped.length > SLACK_CHUNK_CHARS ? `${escaped.slice(0, SLACK_CHUNK_CHARS - 1)}…` : escaped;
}

/** Only reached if the splitter ever returns an oversized piece: cut at a space, never inside `&amp;`. */
function hardSplit(text: string, maxChars: number): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > maxChars) {
    let cut = rest.lastIndexOf(' ', maxChars);
    if (cut < maxChars / 2) {
      cut = maxChars;
      const amp = rest.lastIndexOf('&', cut);
      if (amp > cut - 6 && amp > 0) cut = amp;
    }
    out.push(rest.slice(0, cut));
    rest = rest.slice(cut).trimStart();
  }
  if (rest) out.push(rest);
  return out;
}
