import { randomUUID } from 'node:crypto';
import type { BindingStore } from '../bindings/types.js';
import { encodeConversationId } from '../core/conversation.js';
import type { IncomingMessage } from '../core/message.js';
import type { ReplyPorts } from '../core/reply-port.js';
import { hasVisibleText } from '../core/visible-text.js';
import { errorFields, type Logger } from '../logger.js';
import type { ChatQueue } from '../queue/chat-queue.js';
import type { EditResult } from '../queue/edit-message.js';
import { mayComeLater, type ChangeTiming } from '../queue/early-change.js';
import { fittedText } from './forwarded-fit.js';
import { notices } from './notices.js';

/**
 * What an edit did: see EditResult; `ignored` when the edit is not one the bridge acts on;
 * `kept` when its message is not stored yet (the edit came first): the push that stores it applies it.
 */
export type EditOutcome = EditResult | 'ignored' | 'kept';

/**
 * How an edit came (from the adapter, when its platform says): when the message was sent (with
 * it, an edit that came before its message is kept), the edit's place among its edits (with it,
 * an edit older than one applied already changes nothing), and whether the message mentioned
 * the bot before the edit (false: an edit that does not ask the bot either has nothing to withdraw).
 */
export interface EditTiming extends Partial<ChangeTiming> {
  mentionedBefore?: boolean;
}

export interface EditedMessagesOptions {
  queue: Pick<ChatQueue, 'edit' | 'stored' | 'isAnswered' | 'keepEarly' | 'redisNow'>;
  bindings: Pick<BindingStore, 'get'>;
  ports: ReplyPorts;
  logger: Logger;
  maxMessageChars: number;
}

/**
 * Its sender edited a message (Slack's `message_changed`, Discord's MESSAGE_UPDATE), normalised
 * as a new message is. Only a message that waits in the mailbox is touched, and only until its
 * agent call starts (the same atomic step the worker's read takes, see scripts/edit-4.lua):
 * - still asking the bot: the agent gets the edited text, after the checks a new message gets
 *   (nothing visible left: withdrawn; too long: withdrawn, and the sender is told as for a new
 *   one; a long forward shortened to fit);
 * - no longer asking it (the mention removed, in a channel that answers only mentions):
 *   withdrawn, as a deletion is. Nothing is posted.
 * An edit never makes a message the bot did not take in into a question (most chat bots
 * ignore edits for triggering: adding a mention later asks nothing), and never re-asks one
 * whose call started: the agent answers the text it got (the API is billed per call). The
 * text is never logged: an edit is often a secret taken out.
 *
 * An edit may come before its message is stored (Slack delivers events in no order, and retries
 * a failed delivery after the edit): when the adapter says the message was sent a moment ago
 * (`timing`), the edit is kept for a few minutes and the push that stores the message applies it
 * (src/queue/early-change.ts): the agent never gets the text from before. Edits of one message
 * may come out of order too (Slack's delivery; on Discord, a catch-up that replays an edit after
 * a newer one came live): with the edit's order, one older than the edit applied changes nothing.
 */
export function createEditedMessages(options: EditedMessagesOptions): (m: IncomingMessage, timing?: EditTiming) => Promise<EditOutcome> {
  const { queue, logger } = options;

  /** Whether the edited message still asks the bot, as the ingress would decide for a new one. */
  async function stillAsks(m: IncomingMessage, conversationId: string): Promise<boolean> {
    if (m.isDirect || m.mentionsBot || m.repliesToBot) return true;
    // Without the Message Content intent a message that no longer mentions the bot is unreadable.
    if (m.contentMissing) return false;
    const binding = await options.bindings.get(m.platform, m.instanceChannelId ?? m.bindingChannelId);
    if (binding?.mode === 'all') return true;
    return m.conversation.threadId !== undefined && (await queue.isAnswered(conversationId));
  }

  function tell(m: IncomingMessage, text: string): void {
    const port = options.ports[m.platform];
    void port?.postNotice(m.reply, text).catch((err: Error) => logger.warn({ ...errorFields(err) }, 'could not post a notice'));
  }

  /** What the agent gets of the edited message: its text, or undefined (withdrawn), and why. */
  async function editedText(m: IncomingMessage, conversationId: string): Promise<{ asks: boolean; text?: string; tooLong?: number }> {
    if (!(await stillAsks(m, conversationId))) return { asks: false };
    const fitted = hasVisibleText(m.text) ? fittedText(m, options.maxMessageChars) : undefined;
    if (fitted && 'refused' in fitted) return { asks: true, tooLong: fitted.refused };
    return fitted ? { asks: true, text: fitted.text } : { asks: true };
  }

  function why(m: IncomingMessage, text: string | undefined, tooLong: number | undefined): string {
    return tooLong !== undefined ? 'too long' : text === undefined && hasVisibleText(m.text) ? 'no longer addressed to the bot' : 'left empty';
  }

  /** The edit of a message not stored yet, sent a moment ago: kept for the push that stores it. */
  async function keepEarly(m: IncomingMessage, conversationId: string, timing: EditTiming & ChangeTiming): Promise<EditOutcome | 'stored'> {
    const { asks, text, tooLong } = await editedText(m, conversationId);
    // The edit does not ask the bot, nor did the message as sent (no mention, and nothing else
    // that would ask, which the edit shares: a DM, a reply to the bot, a channel in `all` mode):
    // it is never stored, nothing to keep.
    if (!asks && timing.mentionedBefore === false) return 'absent';
    const kept = await queue.keepEarly(conversationId, m.messageId, { kind: 'edit', text }, timing, randomUUID());
    if (kept === 'stored') return 'stored';
    if (kept !== 'kept') return 'absent';
    const ids = { platform: m.platform, messageId: m.messageId, channelId: m.bindingChannelId, outcome: 'kept' };
    if (text !== undefined) logger.info(ids, 'a message was edited before it was stored: the agent will be asked the edited text');
    else logger.info({ ...ids, why: why(m, text, tooLong) }, `a message was edited (${why(m, text, tooLong)}) before it was stored: the agent will not be asked it`);
    // As for a new message this long: the sender waits for an answer that will not come.
    if (tooLong !== undefined) tell(m, notices.tooLong(tooLong, options.maxMessageChars));
    return 'kept';
  }

  return async function onEdit(m, timing) {
    if (m.fromSelf || m.fromBot) return 'ignored';
    const conversationId = encodeConversationId(m.conversation);
    let stored = await queue.stored(conversationId, m.messageId);
    // Not stored, and sent a moment ago: it may still be on its way (an old message's edit is not
    // kept). "A moment ago" by Redis's clock: this machine's may be minutes off the platform's.
    const sent = timing?.sentAt !== undefined ? { ...timing, sentAt: timing.sentAt } : undefined;
    if (!stored && sent && mayComeLater(sent, await queue.redisNow())) {
      const kept = await keepEarly(m, conversationId, sent);
      if (kept !== 'stored') return kept;
      // Stored in between: edited as any stored message is.
      stored = await queue.stored(conversationId, m.messageId);
    }
    // Never taken in (an edit asks nothing new), or finished already.
    if (!stored) return 'absent';
    // "Ask the agent" asked about the message with a heading of its own: that question stands.
    if (stored.origin === 'shortcut') return 'ignored';
    const { text, tooLong } = await editedText(m, conversationId);
    if (text === stored.text) return 'ignored';
    const outcome = await queue.edit(conversationId, m.messageId, text, randomUUID(), timing?.order);
    const ids = { platform: m.platform, messageId: m.messageId, channelId: m.bindingChannelId, outcome };
    if (outcome === 'edited') logger.info(ids, 'a waiting message was edited: the agent will be asked the edited text');
    if (outcome === 'withdrawn') {
      const reason = why(m, text, tooLong);
      logger.info({ ...ids, why: reason }, `a waiting message was edited (${reason}): the agent will not be asked it`);
      // The sender still waits for an answer: say why none comes, as for a new message.
      if (tooLong !== undefined) tell(m, notices.tooLong(tooLong, options.maxMessageChars));
    }
    if (outcome === 'outdated') logger.info(ids, 'an edit arrived after a newer one of the same message: the newer one stands');
    if (outcome === 'too_late') logger.info(ids, 'a message was edited after its agent call started: the agent got the text from before');
    return outcome;
  };
}
