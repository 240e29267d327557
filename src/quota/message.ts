import type { QuotaResult } from './quota.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

function plural(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/**
 * A wait in plain words, never shorter than the real one: "42 seconds", "3 minutes",
 * "1 hour 20 minutes", "5 hours".
 */
export function formatWait(ms: number): string {
  const safe = Number.isFinite(ms) && ms > 0 ? ms : 0;
  if (safe < MINUTE) return plural(Math.max(1, Math.ceil(safe / SECOND)), 'second');
  if (safe < HOUR) return plural(Math.ceil(safe / MINUTE), 'minute');
  const minutes = Math.ceil(safe / MINUTE);
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  if (hours >= 3 || rest === 0) return plural(rest === 0 ? hours : hours + 1, 'hour');
  return `${plural(hours, 'hour')} ${plural(rest, 'minute')}`;
}

/**
 * What the user reads when a quota refuses their message, e.g. "You've reached the limit of
 * 5 messages per minute in this channel. Try again in 42 seconds." In a direct message (whose
 * "channel" quota is that of the workspace's DMs with the bot) it names direct messages.
 */
export function describeQuotaHit(hit: Extract<QuotaResult, { ok: false }>, where: { direct?: boolean } = {}): string {
  const what = `${plural(hit.limit, 'message')} per ${hit.window}`;
  const limit = hit.scope === 'channel' ? `the limit of ${what} ${where.direct ? 'for direct messages' : 'in this channel'}` : `your limit of ${what}`;
  return `You've reached ${limit}. Try again in ${formatWait(hit.retryAfterMs)}.`;
}
