import type { Redis } from 'ioredis';
import type { Platform } from '../core/conversation.js';
import { luaScript } from './lua-script.js';
import type { QueueKeys } from './keys.js';
import { DELETED_WHY, type GaveUp } from './types.js';

const keep = luaScript('early-change-3.lua');

/**
 * How long an edit or deletion that came before its message is kept, and how recent the message
 * must be for one to be kept at all. Slack retries a failed delivery after about 1 and 5 minutes:
 * a message stored later than this is past the point where an edit could still be made first.
 */
export const EARLY_CHANGE_SECONDS = 600;

/**
 * When a change of a message was made, as its platform says: `sentAt` the message's own time
 * (ms; Slack's `ts`), `order` the change's place among the message's edits (a string of digits,
 * all of one length, that sorts as they were made), when known.
 */
export interface ChangeTiming {
  sentAt: number;
  order?: string;
}

/**
 * An edit's order from the time it was made (ms since the epoch; Discord's `edited_timestamp`):
 * the digits Slack's `edited.ts` gives for the same instant (12 of seconds, 6 of microseconds),
 * so every order has one length and compares as a string (edit-4.lua, early-change-3.lua).
 * Undefined for a time that is none (null, not a number, before 1970).
 */
export function editOrderAt(ms: number | null | undefined): string | undefined {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) return undefined;
  return String(Math.round(ms) * 1000).padStart(18, '0');
}

/**
 * Whether a change of a message this recent is kept: its message may still be on its way. `now`
 * is Redis's clock (redis-clock.ts), not this machine's, which may be minutes off the platform's.
 */
export function mayComeLater(timing: ChangeTiming, now: number): boolean {
  return Math.abs(now - timing.sentAt) <= EARLY_CHANGE_SECONDS * 1000;
}

/** An edit (`text`, the edited text; undefined: it no longer asks the bot) or a deletion. */
export type EarlyChange = { kind: 'edit'; text: string | undefined } | { kind: 'delete' };

/**
 * What became of a change of a message not stored: `stored` (it is now: change the record),
 * `finished` (taken in and done, or refused: nothing to change), `kept` (the push that stores it
 * applies it), `superseded` (a later edit, or a deletion, is kept already), `old` (the message is
 * older than {@link EARLY_CHANGE_SECONDS}: no push of it is still to come).
 */
export type EarlyChangeResult = 'stored' | 'finished' | 'kept' | 'superseded' | 'old';

/**
 * Keeps an edit or deletion of a message that is not stored yet, for a few minutes, for the push
 * that stores it to apply (scripts/early-change-3.lua, scripts/includes/push-message.lua):
 * atomic against that push, so either this finds it stored or the push finds the change. The
 * edited text is the only thing kept of what the message says; nothing at all for a withdrawal.
 * A message sent more than {@link EARLY_CHANGE_SECONDS} ago keeps nothing.
 */
export async function keepEarlyChange(
  redis: Redis,
  keys: QueueKeys,
  at: { platform: Platform; conversationId: string; messageId: string },
  change: EarlyChange,
  timing: ChangeTiming,
  ref: string,
): Promise<EarlyChangeResult> {
  const text = change.kind === 'edit' && change.text !== undefined ? JSON.stringify(change.text) : '';
  const mark = JSON.stringify({ ref, withdrawn: true, ...(change.kind === 'delete' ? { why: DELETED_WHY } : {}) } satisfies GaveUp);
  const r = Number(
    await keep(
      redis,
      [keys.messages(at.conversationId), keys.seen(at.platform, at.messageId), keys.earlyChange(at.conversationId, at.messageId)],
      [at.messageId, text, mark, timing.order ?? '', change.kind === 'delete' ? '1' : '0', EARLY_CHANGE_SECONDS, Math.round(timing.sentAt)],
    ),
  );
  return r === 0 ? 'stored' : r === 1 ? 'finished' : r === 2 ? 'kept' : r === 4 ? 'old' : 'superseded';
}
