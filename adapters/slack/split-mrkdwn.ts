import { splitMarkdown } from '../../src/render/split-markdown.js';

/** Stands in for a space inside a `<…>` token while splitting (private use: never in Slack text). */
const KEEP = '\uE000';
/** Room for moving the start of a cut entity (`&amp;` is the longest) to the next piece. */
const ENTITY_ROOM = 4;
/** A piece that ends in the first part of an entity the next piece finishes. */
const CUT_ENTITY = /&(?:a|am|amp|l|lt|g|gt)?$/;

/**
 * Slack mrkdwn cut into pieces of at most `maxChars` with splitMarkdown's clean cuts (lines,
 * then words; code fences closed and reopened; emoji never halved), and never inside a
 * `<url|label>` link, a mention or an `&amp;` entity: a token's spaces are not places to cut,
 * and a word too long for one piece is not cut inside an entity.
 */
export function splitMrkdwn(text: string, maxChars: number): string[] {
  if (text.includes(KEEP)) return splitMarkdown(text, maxChars);
  const guarded = text.replace(/<[^<>\n]*>/g, (token) => token.replaceAll(' ', KEEP));
  const pieces = splitMarkdown(guarded, maxChars - ENTITY_ROOM).map((piece) => piece.replaceAll(KEEP, ' '));
  for (let i = 0; i + 1 < pieces.length; i += 1) {
    const start = CUT_ENTITY.exec(pieces[i]!);
    if (!start || !/^&(?:amp|lt|gt);/.test(start[0] + pieces[i + 1]!)) continue;
    pieces[i] = pieces[i]!.slice(0, start.index);
    pieces[i + 1] = start[0] + pieces[i + 1]!;
  }
  return pieces.filter((piece) => piece.length > 0);
}
