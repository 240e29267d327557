import { misleadingLabel, shownTarget, withoutBidiControls } from '../../src/render/link-labels.js';

/**
 * A masked link as Discord reads one: `[label](target)`, the label with at most one level of
 * brackets inside, the target optionally in `<…>` and with balanced parentheses, an optional
 * title. Every repetition is bounded and its alternatives start differently, so a line of
 * brackets and parentheses costs linear time, not a backtracking storm.
 */
const MASKED_LINK = /\[((?:[^[\]\n]|\[[^[\]\n]{0,500}\]){1,1000})\]\(\s{0,20}(<?)((?:[^\s()<>]|\([^\s()<>]{0,500}\)){1,2048})>?(?:\s{1,20}(?:"[^"\n]{0,300}"|'[^'\n]{0,300}'))?\s{0,20}\)/g;

/**
 * Part of a line outside code, with every masked link whose label shows an address other than
 * the one it opens (or carries bidi controls) written as `label (<target>)`: the label stays as
 * text and the real target is shown and linked. Other links are left byte for byte.
 */
export function unmaskMisleadingLinks(text: string): string {
  if (!text.includes('](')) return text;
  return text.replace(MASKED_LINK, (whole, label: string, _angle: string, href: string) => {
    if (!/^https?:\/\//i.test(href) || !misleadingLabel(label, href)) return whole;
    return `${withoutBidiControls(label)} (<${shownTarget(href)}>)`;
  });
}
