import { MessageFlags, type ButtonInteraction } from 'discord.js';
import type { BindingStore } from '../../../src/bindings/types.js';
import { callerOf } from '../commands/access.js';
import type { FeedbackStore } from '../../../src/feedback/index.js';
import { parseFeedbackCustomId } from './buttons.js';

/** The part of the feedback store (src/feedback) a click needs. */
export type FeedbackRecorder = Pick<FeedbackStore, 'record'>;

export interface FeedbackClickDeps {
  feedback: FeedbackRecorder;
  bindings: Pick<BindingStore, 'get'>;
}

export const FEEDBACK_ANSWERS = {
  positive: 'Thanks for the feedback! 👍',
  negative: 'Thanks for the feedback: it helps improve the answers. 👎',
  noInstance: "Thanks! This channel isn't connected to an agent any more, so the vote could not be recorded.",
};

/**
 * A 👍/👎 click on the last message of a reply. Discord wants an answer within 3 s, so the
 * interaction is acknowledged (ephemeral "thanks") before the vote is written. The vote counts
 * for the instance the button names, or (when the worker did not tell the port) the instance
 * bound to the channel.
 */
export async function onFeedbackClick(i: ButtonInteraction, deps: FeedbackClickDeps): Promise<boolean> {
  const parsed = parseFeedbackCustomId(i.customId);
  if (!parsed) return false;
  const caller = callerOf(i);
  const binding = parsed.instanceId
    ? { instanceId: parsed.instanceId }
    : ((await deps.bindings.get('discord', caller.channelId)) ?? (i.guildId ? undefined : await deps.bindings.get('discord', 'dm')));
  if (!binding) {
    await i.reply({ content: FEEDBACK_ANSWERS.noInstance, flags: MessageFlags.Ephemeral });
    return true;
  }
  await i.reply({ content: FEEDBACK_ANSWERS[parsed.rating], flags: MessageFlags.Ephemeral });
  await deps.feedback.record({
    platform: 'discord',
    workspaceId: caller.workspaceId,
    channelId: caller.channelId,
    instanceId: binding.instanceId,
    agentMessageId: parsed.agentMessageId,
    userId: i.user.id,
    rating: parsed.rating,
    link: i.message.url,
  });
  return true;
}
