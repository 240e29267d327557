import type { IncomingMessage } from '../core/message.js';

/** Where a forwarded message was cut to fit: the agent is told it did not get all of it. */
export const FORWARD_SHORTENED = '[forwarded message shortened]';

/**
 * A message's text within `maxChars`, cutting only the forwarded part: what follows the sender's
 * own words (the first `ownChars` characters) up to `forwardedEnd` (the files read into the
 * message come after it, and are kept). A short question about a long forward is still a
 * question worth answering; only the sender's own words being too long is a reason to refuse.
 * Undefined when those alone leave no room for the note. `ownChars` undefined: all of the text
 * is the sender's own.
 */
export function fitForwarded(text: string, ownChars: number | undefined, maxChars: number, forwardedEnd = text.length): string | undefined {
  if (text.length <= maxChars) return text;
  if (ownChars === undefined) return undefined;
  const note = `\n${FORWARD_SHORTENED}`;
  const end = Math.min(Math.max(forwardedEnd, ownChars), text.length);
  const tail = text.slice(end);
  // Files too long to keep beside the own words and the note: cut from the end instead (they were fitted to the limit on their own).
  if (ownChars + note.length + tail.length > maxChars) return end === text.length ? undefined : fitForwarded(text, ownChars, maxChars);
  const room = maxChars - note.length - tail.length;
  let cut = Math.min(room, end);
  // Never half a surrogate pair at the cut.
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut -= 1;
  // Whole lines where that loses little: the forward is quoted line by line.
  const newline = text.lastIndexOf('\n', cut);
  if (newline >= ownChars && newline > cut - 200) cut = newline;
  return `${text.slice(0, Math.max(cut, ownChars)).trimEnd()}${note}${tail}`;
}

/**
 * The text the ingress queues for `m`: trimmed, a long forward shortened ({@link fitForwarded}).
 * `refused`: the sender's own words alone are over the limit, with the length they can act on.
 */
export function fittedText(m: Pick<IncomingMessage, 'text' | 'ownChars' | 'forwardedEnd'>, maxChars: number): { text: string } | { refused: number } {
  const trimmed = m.text.trim();
  const lead = m.text.length - m.text.trimStart().length;
  const own = m.ownChars === undefined ? undefined : Math.max(0, m.ownChars - lead);
  const forwardedEnd = m.forwardedEnd === undefined ? undefined : Math.max(0, m.forwardedEnd - lead);
  const text = fitForwarded(trimmed, own, maxChars, forwardedEnd);
  if (text !== undefined) return { text };
  // The length the sender can act on: their own words', when those alone are over.
  return { refused: own !== undefined && own > maxChars ? own : trimmed.length };
}

/** The sender's own words: files are read against these alone, so a long forward cannot take their room. */
export function ownWords(m: Pick<IncomingMessage, 'text' | 'ownChars'>): string {
  return m.ownChars === undefined ? m.text : m.text.slice(0, m.ownChars);
}

/**
 * The message once its files were read against {@link ownWords} (`withFiles`: those words with
 * the files appended): the forward stays between the two, where it may be shortened to fit.
 */
export function withFilesRead<M extends Pick<IncomingMessage, 'text' | 'ownChars' | 'forwardedEnd'>>(m: M, withFiles: string): M {
  if (m.ownChars === undefined) return { ...m, text: withFiles };
  const own = ownWords(m);
  const forwarded = m.text.slice(m.ownChars, m.forwardedEnd ?? m.text.length);
  return { ...m, text: `${own}${forwarded}${withFiles.slice(own.length)}`, forwardedEnd: own.length + forwarded.length };
}

/** `heading` put ahead of the message's text (whose message it is), the forward's place moved with it. */
export function withHeading<M extends Pick<IncomingMessage, 'text' | 'ownChars' | 'forwardedEnd'>>(m: M, heading: string): M {
  return {
    ...m,
    text: `${heading}${m.text}`,
    ...(m.ownChars !== undefined ? { ownChars: heading.length + m.ownChars } : {}),
    ...(m.forwardedEnd !== undefined ? { forwardedEnd: heading.length + m.forwardedEnd } : {}),
  };
}
