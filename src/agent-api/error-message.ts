import { scrub } from '../core/scrub.js';
import { parseJson } from '../json.js';
/** Longest piece of the service's own words that goes into an error message. */
export const MAX_DETAIL_CHARS = 200;

/**
 * A readable message from an error body whose format the spec does not document: the
 * `error`, `message` or `detail` field of a JSON body (a string, an object with `message`,
 * or a list of those), else the body's text with HTML tags stripped. Whitespace collapsed,
 * secrets replaced, at most MAX_DETAIL_CHARS characters. Empty when there is nothing to say.
 */
export function readableDetail(body: string, contentType: string | null, secrets: readonly string[]): string {
  const text = fromJson(body) ?? (looksLikeHtml(body, contentType) ? htmlToText(body) : body);
  return truncate(collapse(scrub(text, secrets)), MAX_DETAIL_CHARS);
}

function fromJson(body: string): string | undefined {
  const data = parseJson(body);
  if (typeof data === 'string') return data;
  if (!isRecord(data)) return undefined;
  for (const field of ['error', 'message', 'detail', 'error_description']) {
    const text = messageOf(data[field]);
    if (text) return text;
  }
  return undefined;
}

function messageOf(value: unknown, depth = 0): string | undefined {
  if (typeof value === 'string') return value.trim() || undefined;
  if (depth > 2) return undefined;
  if (Array.isArray(value)) {
    const parts = value.map((v) => messageOf(v, depth + 1)).filter((v): v is string => Boolean(v));
    return parts.length > 0 ? parts.join('; ') : undefined;
  }
  if (isRecord(value)) return messageOf(value.message ?? value.msg ?? value.error ?? value.detail, depth + 1);
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function looksLikeHtml(body: string, contentType: string | null): boolean {
  return /html/i.test(contentType ?? '') || /^\s*<(?:!doctype|html|head|body|[a-z][a-z0-9]*[\s>])/i.test(body);
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function htmlToText(html: string): string {
  return html
    .replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#\d+|#x[0-9a-f]+|[a-z]+);/gi, (whole, name: string) => {
      if (name.startsWith('#')) {
        const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
        return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
      }
      return ENTITIES[name.toLowerCase()] ?? whole;
    });
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = Array.from(text.slice(0, max)).slice(0, -1).join('');
  // At a space: a word cut in half may be the start of a secret (a credential value the
  // service quotes), which the redaction after this (fingerprints, the logger) no longer knows.
  const space = head.lastIndexOf(' ');
  return `${space > 0 ? head.slice(0, space) : head}…`;
}
