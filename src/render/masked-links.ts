import { FENCE } from './split-markdown.js';
import { encodeHiddenInUrl, misleadingLabel, shownTarget, withoutBidiControls } from './link-labels.js';

/**
 * A Markdown link as Discord and the playground read one: `[label](target)`, the label with at
 * most one level of brackets inside, the target optionally in `<…>` and with balanced
 * parentheses, an optional title. Every repetition is bounded and its alternatives start
 * differently, so a line of brackets and parentheses costs linear time, not a backtracking storm.
 * The bounds are past a message's length on every platform (Discord 2,000, the playground 4,000).
 */
const MASKED_LINK = /\[((?:[^[\]\n]|\[[^[\]\n]{0,500}\]){1,4000})\]\(\s{0,20}(<?)((?:[^\s()<>]|\([^\s()<>]{0,500}\)){1,4000})>?(?:\s{1,20}(?:"[^"\n]{0,300}"|'[^'\n]{0,300}'))?\s{0,20}\)/g;

/** How a platform writes an unmasked link: the label as text, then the real target. */
export type ShowLink = (label: string, target: string) => string;

/**
 * Text with every Markdown link whose label shows an address other than the one it opens (or
 * carries bidi controls) written out by `show`, its label without bidi controls. Other links
 * are left byte for byte. Code spans are not skipped: Discord shows code inside a link's label.
 */
export function unmaskMisleadingLinks(text: string, show: ShowLink): string {
  if (!text.includes('](')) return text;
  return text.replace(MASKED_LINK, (whole, label: string, _angle: string, href: string) => {
    if (!/^(?:https?:\/\/|mailto:)/i.test(href)) return whole;
    // A target with bidi controls or invisible characters shows (on hover) as another address.
    if (!misleadingLabel(label, href)) return encodeHiddenInUrl(href) === href ? whole : whole.replace(href, encodeHiddenInUrl(href));
    return show(withoutBidiControls(label), shownTarget(href));
  });
}

/** `unmaskMisleadingLinks` on every line outside fenced code blocks (where no link is shown). */
export function unmaskOutsideFences(markdown: string, show: ShowLink): string {
  if (!markdown.includes('](')) return markdown;
  return mapOutsideFences(markdown, (line) => unmaskMisleadingLinks(line, show));
}

/** `each` applied to every line outside fenced code blocks; fences and their lines kept as written. */
export function mapOutsideFences(markdown: string, each: (line: string) => string): string {
  let open: string | undefined;
  return markdown
    .split('\n')
    .map((line) => {
      const fence = FENCE.exec(line);
      if (open !== undefined) {
        if (fence && fence[2]![0] === open[0] && fence[2]!.length >= open.length && fence[3]!.trim() === '') open = undefined;
        return line;
      }
      if (fence) {
        open = fence[2]!;
        return line;
      }
      return each(line);
    })
    .join('\n');
}
