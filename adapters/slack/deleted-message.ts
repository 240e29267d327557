import type { App } from '@slack/bolt';
import type { ConversationRef } from '../../src/core/conversation.js';
import type { ChangeTiming } from '../../src/queue/early-change.js';
import type { WithdrawResult } from '../../src/queue/mailbox.js';
import { errorFields, type Logger } from '../../src/logger.js';
import { askIdPrefix } from './ask-shortcut.js';
import { slackChangeTiming } from './change-timing.js';
import { normaliseSlackEvent } from './normalise.js';

export interface DeletionDeps {
  /** `timing`: when the message was sent; one not stored yet is withdrawn when it is (`kept`). */
  withdraw: (conversation: ConversationRef, messageId: string, timing?: ChangeTiming) => Promise<WithdrawResult>;
  /** The queued message IDs of a conversation that start with a prefix (the "Ask the agent" questions about a message). */
  queuedIdsStartingWith?: ((conversation: ConversationRef, prefix: string) => Promise<string[]>) | undefined;
  logger: Logger;
}

/**
 * `message_deleted`: someone deleted a message the bot has not answered yet (a question sent by
 * mistake, a secret pasted into it). The agent is not asked it, and nothing is posted under it;
 * an answer already written is still posted (the call is billed). Its conversation is the one
 * the message had: `previous_message` says whether it was a thread reply. Each "Ask the agent"
 * about it still waiting is withdrawn too: what the message held is not sent that way either.
 * Slack delivers events in no order: a deletion that comes before its message (sent a moment
 * ago, its first delivery failed or still under way) is kept, and the message is withdrawn as
 * it is stored.
 */
export function registerDeletionListener(app: App, deps: DeletionDeps): void {
  const withdraw = async (conversation: ConversationRef, messageId: string, timing?: ChangeTiming) => {
    try {
      const outcome = await deps.withdraw(conversation, messageId, timing);
      if (outcome === 'absent' || outcome === 'answered') return;
      deps.logger.info(
        { messageId, channel: conversation.channelId, outcome },
        outcome === 'withdrawn'
          ? 'a message was deleted before it was answered: the agent will not be asked it'
          : outcome === 'kept'
            ? 'a message was deleted before it was stored: the agent will not be asked it'
            : 'a message was deleted while the agent worked on it: the answer of that call may still be posted, but it is not asked again',
      );
    } catch (err) {
      deps.logger.warn({ messageId, ...errorFields(err) }, 'could not withdraw a deleted message: it may still be answered');
    }
  };

  app.event('message', async ({ body, event }) => {
    const e = event as { subtype?: string; channel?: unknown; channel_type?: unknown; deleted_ts?: unknown; previous_message?: Record<string, unknown> };
    if (e.subtype !== 'message_deleted' || typeof e.deleted_ts !== 'string') return;
    // The deleted message as it was, normalised as any message is (its conversation and ID).
    const previous = { user: 'U0DELETED', ...e.previous_message, type: 'message', subtype: undefined, edited: undefined, channel: e.channel, channel_type: e.channel_type, ts: e.deleted_ts };
    const result = normaliseSlackEvent({ ...(body as object), event: previous }, { userId: '' });
    if (result.kind !== 'message') return;
    const { conversation, messageId } = result.message;
    await withdraw(conversation, messageId, slackChangeTiming(e.deleted_ts));
    if (!deps.queuedIdsStartingWith) return;
    // An ask's conversation always names a thread: the message's own when it is in none (a DM's top level).
    const asked = { ...conversation, threadId: conversation.threadId ?? e.deleted_ts };
    const asks = await deps.queuedIdsStartingWith(asked, askIdPrefix(conversation.channelId, e.deleted_ts)).catch((err: unknown) => {
      deps.logger.warn({ messageId, ...errorFields(err) }, 'could not look for "Ask the agent" questions about a deleted message: they may still be answered');
      return [];
    });
    for (const id of asks) await withdraw(asked, id);
  });
}
