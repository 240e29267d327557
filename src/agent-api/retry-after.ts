/** Longest Retry-After of the agent service that is waited out; a longer one gives the message up with the wait (src/worker/error-policy.ts). */
export const LONG_AGENT_WAIT_MS = 5 * 60_000;
/** Longest wait honoured; a larger value is capped (a misconfigured proxy must not park the queue for days). */
export const MAX_RETRY_AFTER_MS = 3_600_000;

const SECONDS = /^\d+(?:\.\d+)?$/;
// HTTP-date (RFC 9110): IMF-fixdate, or the obsolete RFC 850 and asctime forms. All start with a day name.
const HTTP_DATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,?\s/i;

/**
 * Milliseconds to wait from a Retry-After header value: delta-seconds or an HTTP-date,
 * clamped to [0, MAX_RETRY_AFTER_MS]. `undefined` when the value is absent or unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  if (SECONDS.test(v)) return clamp(Math.ceil(Number(v) * 1000));
  if (!HTTP_DATE.test(v)) return undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : clamp(at - now);
}

function clamp(ms: number): number {
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms));
}
