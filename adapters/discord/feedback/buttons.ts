import { ButtonStyle, ComponentType, type APIActionRowComponent, type APIButtonComponentWithCustomId } from 'discord-api-types/v10';
import { decodeFeedbackValue, encodeFeedbackValue, type Rating } from '../../../src/feedback/index.js';

/** Discord refuses a longer `custom_id`. */
export const MAX_CUSTOM_ID = 100;

/** A rated reply as a button names it; `instanceId` is absent when the port was not told it. */
export interface FeedbackTarget {
  rating: Rating;
  agentMessageId: string;
  instanceId?: string;
}

/**
 * The button's `custom_id`: the shared `fb:<+|->:<instance>:<agent message ID>` when the instance
 * is known, else `fb:<p|n>:<agent message ID>` (the click then counts for the channel's binding).
 */
export function feedbackCustomId(t: FeedbackTarget): string | undefined {
  if (t.instanceId) return encodeFeedbackValue({ rating: t.rating, instanceId: t.instanceId, agentMessageId: t.agentMessageId }, MAX_CUSTOM_ID);
  const id = `fb:${t.rating === 'positive' ? 'p' : 'n'}:${t.agentMessageId}`;
  return id.length <= MAX_CUSTOM_ID ? id : undefined;
}

/** What a clicked button's `custom_id` says, or undefined when it is not a feedback button. */
export function parseFeedbackCustomId(customId: string): FeedbackTarget | undefined {
  const shared = decodeFeedbackValue(customId);
  if (shared) return shared;
  const match = /^fb:([pn]):(.+)$/s.exec(customId);
  if (!match) return undefined;
  return { rating: match[1] === 'p' ? 'positive' : 'negative', agentMessageId: match[2]! };
}

/**
 * One action row with 👍 and 👎 for the last message of a reply. None when the agent gave the
 * reply no ID, or the IDs would make a `custom_id` longer than Discord allows: a vote must name
 * the reply it is about.
 */
export function feedbackRow(agentMessageId: string | undefined, instanceId?: string): APIActionRowComponent<APIButtonComponentWithCustomId>[] {
  if (!agentMessageId) return [];
  const up = feedbackCustomId({ rating: 'positive', agentMessageId, instanceId });
  const down = feedbackCustomId({ rating: 'negative', agentMessageId, instanceId });
  if (!up || !down) return [];
  const button = (customId: string, emoji: string): APIButtonComponentWithCustomId => ({
    type: ComponentType.Button,
    style: ButtonStyle.Secondary,
    custom_id: customId,
    emoji: { name: emoji },
  });
  return [{ type: ComponentType.ActionRow, components: [button(up, '👍'), button(down, '👎')] }];
}
