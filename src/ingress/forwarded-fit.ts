/** Where a forwarded message was cut to fit: the agent is told it did not get all of it. */
export const FORWARD_SHORTENED = '[forwarded message shortened]';

/**
 * A message's text within `maxChars`, cutting only what follows the sender's own words (the
 * first `ownChars` characters): a forwarded message, and what came with it. A short question
 * about a long forward is still a question worth answering; only the sender's own words being
 * too long is a reason to refuse. Undefined when those alone leave no room for the note.
 * `ownChars` undefined: all of the text is the sender's own.
 */
export function fitForwarded(text: string, ownChars: number | undefined, maxChars: number): string | undefined {
  if (text.length <= maxChars) return text;
  if (ownChars === undefined) return undefined;
  const note = `\n${FORWARD_SHORTENED}`;
  const room = maxChars - note.length;
  if (ownChars > room) return undefined;
  let cut = room;
  // Never half a surrogate pair at the cut.
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut -= 1;
  // Whole lines where that loses little: the forward is quoted line by line.
  const newline = text.lastIndexOf('\n', cut);
  if (newline >= ownChars && newline > cut - 200) cut = newline;
  return `${text.slice(0, Math.max(cut, ownChars)).trimEnd()}${note}`;
}
