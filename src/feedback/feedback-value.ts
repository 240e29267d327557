/**
 * What a feedback button carries, so a click alone says which reply it rates: the instance and
 * the agent service's message ID. Both platforms' buttons use it (Slack `value`, Discord
 * `custom_id`, limit 100 characters): `fb:<rating>:<instanceId>:<agentMessageId>`.
 */
import type { Rating } from './feedback-store.js';

export interface FeedbackRef {
  rating: Rating;
  instanceId: string;
  agentMessageId: string;
}

const PREFIX = 'fb';

/** Encodes a button value; undefined when it would not fit in `maxLength` (then no buttons are shown). */
export function encodeFeedbackValue(ref: FeedbackRef, maxLength = 100): string | undefined {
  const value = `${PREFIX}:${ref.rating === 'positive' ? '+' : '-'}:${encodeURIComponent(ref.instanceId)}:${encodeURIComponent(ref.agentMessageId)}`;
  return value.length <= maxLength ? value : undefined;
}

/** Decodes a button value; undefined for anything that is not ours. */
export function decodeFeedbackValue(value: string): FeedbackRef | undefined {
  const m = /^fb:([+-]):([^:]+):([^:]+)$/.exec(value);
  if (!m) return undefined;
  try {
    return { rating: m[1] === '+' ? 'positive' : 'negative', instanceId: decodeURIComponent(m[2]!), agentMessageId: decodeURIComponent(m[3]!) };
  } catch {
    return undefined;
  }
}
