import type { ChangeTiming } from '../../src/queue/early-change.js';

/**
 * When a Slack edit or deletion was made (src/queue/early-change.ts): the message's time is its
 * `ts`, an edit's place is its `edited.ts` (a deletion's own `ts` is not needed: it is final).
 */
export function slackChangeTiming(messageTs: string, editedTs?: unknown): ChangeTiming | undefined {
  const sentAt = Number(messageTs) * 1000;
  if (!Number.isFinite(sentAt) || sentAt <= 0) return undefined;
  const order = typeof editedTs === 'string' ? tsOrder(editedTs) : undefined;
  return { sentAt: Math.floor(sentAt), ...(order ? { order } : {}) };
}

/** A Slack `ts` ("1700000000.000123") as digits of one length, which sort as the times do. */
function tsOrder(ts: string): string | undefined {
  const match = /^(\d{1,12})\.(\d{1,6})$/.exec(ts);
  return match ? `${match[1]!.padStart(12, '0')}${match[2]!.padEnd(6, '0')}` : undefined;
}
