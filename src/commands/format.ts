import type { CommandReply } from './types.js';

/**
 * Text safe inside a `code` span: no backticks, control characters or angle brackets (Slack
 * mention syntax), whitespace collapsed, at most `max` characters.
 */
export function code(text: string, max = 80): string {
  const clean = Array.from(
    String(text)
      .replace(/[\p{Cc}\p{Cf}`<>]/gu, ' ')
      .replace(/\s+/gu, ' ')
      .trim(),
  );
  const shown = clean.length > max ? `${clean.slice(0, max - 1).join('')}…` : clean.join('');
  return `\`${shown || ' '}\``;
}

/** "just now", "5 minutes ago", "3 hours ago", "2 days ago". */
export function ago(at: number, now: number): string {
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 45) return 'just now';
  const m = Math.round(s / 60);
  if (m < 60) return `${m} minute${m === 1 ? '' : 's'} ago`;
  const h = Math.round(m / 60);
  if (h < 36) return `${h} hour${h === 1 ? '' : 's'} ago`;
  const d = Math.round(h / 24);
  return `${d} day${d === 1 ? '' : 's'} ago`;
}

/** `2025-01-31 14:05 UTC` */
export function utcMinute(at: number): string {
  const iso = new Date(at).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}


export function reply(ok: boolean, title: string, lines: string[], table?: CommandReply['table']): CommandReply {
  return table ? { ok, title, lines, table } : { ok, title, lines };
}
