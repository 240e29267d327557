import { domainToASCII } from 'node:url';

/**
 * Masked links in the agent's reply. The reply may be an attacker's words (a prompt injection in
 * a message, file or page the agent read), and a link whose shown text is one address while it
 * opens another (`[https://bank.example](https://evil.example)`) is the oldest phishing trick.
 * The platforms warn about it only sometimes, so the renderers show the real target next to such
 * a label. Everything here is linear in its input: a reply is up to tens of kilobytes of
 * untrusted text.
 */

/**
 * Bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069): they reorder what
 * follows on screen, so `\u202Emoc.knab//:sptth` shows as a bank's address. Link text never needs them.
 */
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g;
const HAS_BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/;
/** Invisible characters that can split a look-alike address so no check sees it whole. */
const INVISIBLE = /[\u00AD\u200B-\u200D\u2060\uFEFF]/g;

/** The text with bidi controls removed (what a link's label may show). */
export function withoutBidiControls(text: string): string {
  return text.replace(BIDI_CONTROLS, '');
}

/** Bidi controls and invisible characters, which an address never shows: percent-encoded in one. */
const HIDDEN_IN_URL = /[\u00AD\u200B-\u200F\u202A-\u202E\u2060\u2066-\u2069\uFEFF]/g;

/** A URL with its bidi controls and invisible characters percent-encoded, so it shows as what it opens. */
export function encodeHiddenInUrl(url: string): string {
  return url.replace(HIDDEN_IN_URL, (c) => encodeURIComponent(c));
}

/**
 * Text whose bare URLs (runs of non-space holding `://`) have their bidi controls and invisible
 * characters percent-encoded: `https://evil.example/\u202Eelpmaxe.knab` would show reversed, as
 * the bank's address, and the platform links the whole run.
 */
export function encodeHiddenInBareUrls(text: string): string {
  if (!HAS_HIDDEN.test(text)) return text;
  return text.replace(/\S+/g, (run) => (run.includes('://') ? encodeHiddenInUrl(run) : run));
}
const HAS_HIDDEN = /[\u00AD\u200B-\u200F\u202A-\u202E\u2060\u2066-\u2069\uFEFF]/;

/** Words of a label, cut at what cannot be part of an address. */
const WORD_BREAKS = /[\s<>()[\]{}"'`*_~|,;!\\]+/;
const SCHEME = /^[a-z][a-z0-9+.-]{0,30}:\/\//i;
/** A host name: dot-separated labels ending in one that starts with a letter (a TLD), or an IPv4 address. */
const HOST_NAME = /^(?:[\p{L}\p{N}-]+\.)+\p{L}[\p{L}\p{N}-]*$/u;
const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;
/** Longest label looked at word by word; a longer one is shown with its target whatever it says. */
const MAX_LABEL_CHARS = 2_000;

/** The host a word of a label names (`bank.example`, `https://bank.example/login`, `1.2.3.4`), in ASCII, lower case. */
function hostNamedBy(word: string): string | undefined {
  let rest = word.replace(SCHEME, '');
  rest = rest.slice(0, firstOf(rest, '/?#'));
  rest = rest.slice(rest.lastIndexOf('@') + 1).replace(/:\d*$/, '').replace(/\.+$/, '');
  if (!rest.includes('.')) return undefined;
  if (IPV4.test(rest)) return rest;
  if (!HOST_NAME.test(rest)) return undefined;
  return domainToASCII(rest.toLowerCase()) || rest.toLowerCase();
}

function firstOf(text: string, chars: string): number {
  for (let i = 0; i < text.length; i++) if (chars.includes(text[i]!)) return i;
  return text.length;
}

/** The same site: one host equal to the other, or under it (`www.bank.example` and `bank.example`). */
function sameSite(a: string, b: string): boolean {
  return a === b || a.endsWith(`.${b}`) || b.endsWith(`.${a}`);
}

/**
 * The host of an http(s) link target, as the browser will read it (punycode, lower case), or the
 * domain of a mailto target's first address; undefined if it is neither.
 */
function targetHost(href: string): string | undefined {
  try {
    const url = new URL(href.trim());
    if (url.protocol === 'mailto:') return hostNamedBy(decodeURIComponent(url.pathname.split(',')[0] ?? ''));
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.hostname.replace(/\.$/, '') : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a link's shown text names an address (a URL, a domain, an IP) on another site than
 * the one it opens, or carries bidi controls: then the real target must be shown too. A label
 * of plain words (`[the docs](https://…)`) is not. Over MAX_LABEL_CHARS it is, unread.
 */
export function misleadingLabel(label: string, href: string): boolean {
  if (HAS_BIDI_CONTROL.test(label)) return true;
  const target = targetHost(href);
  if (target === undefined) return false;
  if (label.length > MAX_LABEL_CHARS) return true;
  return label
    .replace(INVISIBLE, '')
    .split(WORD_BREAKS)
    .some((word) => {
      const named = hostNamedBy(word);
      return named !== undefined && !sameSite(named, target);
    });
}

/**
 * A link target as shown next to a misleading label: the URL as a browser reads it (a look-alike
 * Unicode host in punycode, invisible and bidi characters percent-encoded).
 */
export function shownTarget(href: string): string {
  try {
    return new URL(href.trim()).href;
  } catch {
    return href.trim();
  }
}
