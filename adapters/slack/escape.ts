import { encodeHiddenInUrl } from '../../src/render/link-labels.js';

/**
 * Slack text escaping. Slack reads `&`, `<` and `>` as control characters everywhere in a
 * message (code blocks included): `<!channel>`, `<!here>`, `<@U…>` and `<!subteam^…>` ping
 * people. Escaping the three characters is what Slack documents to show them literally.
 */
export function escapeSlackText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** `@channel`, `@here` and `@everyone` typed as words never ping (no link_names), but stay inert if that changes. */
export function breakBroadcastWords(text: string): string {
  return text.replace(/@(channel|here|everyone)\b/gi, '@\u200B$1');
}

/**
 * Last line of defence for text about to be posted: every `<` that does not open a link we
 * made (`<https://…|label>`, `<mailto:…>`) is escaped, so no mention, broadcast or user-group
 * sequence survives, whatever produced the text.
 */
export function neutraliseMentions(text: string): string {
  return breakBroadcastWords(text.replace(/<(?!(?:https?:\/\/|mailto:)[^\s<>|]+(?:\|[^<>]*)?>)/gi, '&lt;'));
}

/** Decodes the character references Markdown text may carry (`&amp;`, `&#39;`, `&#x1F600;`). */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|amp|lt|gt|quot|apos|nbsp);/gi, (whole, ref: string) => {
    const r = ref.toLowerCase();
    if (r === 'amp') return '&';
    if (r === 'lt') return '<';
    if (r === 'gt') return '>';
    if (r === 'quot') return '"';
    if (r === 'apos') return "'";
    if (r === 'nbsp') return '\u00A0';
    const code = r.startsWith('#x') ? Number.parseInt(r.slice(2), 16) : Number.parseInt(r.slice(1), 10);
    return Number.isInteger(code) && code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : whole;
  });
}

/** A link target Slack can carry inside `<…|…>`: http(s) or mailto, with the delimiters encoded. */
export function safeLinkTarget(href: string): string | undefined {
  // Bidi controls and invisible characters would let the shown address differ from the opened one.
  const trimmed = encodeHiddenInUrl(href.trim());
  if (!/^(https?:\/\/|mailto:)/i.test(trimmed)) return undefined;
  const encoded = trimmed
    .replace(/&/g, '&amp;')
    .replace(/</g, '%3C')
    .replace(/>/g, '%3E')
    .replace(/\|/g, '%7C')
    .replace(/\s/g, (c) => encodeURIComponent(c));
  return encoded.length <= 3000 ? encoded : undefined;
}
