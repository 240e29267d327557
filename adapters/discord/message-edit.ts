import type { Message, PartialMessage } from 'discord.js';
import { errorFields } from '../../src/logger.js';
import { withTimeout } from '../../src/core/with-timeout.js';
import type { AdapterContext } from '../../src/core/platform-context.js';
import { normaliseMessage, stripBotMention } from './normalise-message.js';
import { withAttachments, type AttachmentLimits } from './attachments.js';
import { discordChangeTiming } from './change-timing.js';

/** A replied-to message not in the cache is fetched; past this it is let go. */
const LOOKUP_MS = 3_000;

export interface MessageEditOptions {
  ctx: Pick<AdapterContext, 'editMessage' | 'logger'>;
  /** DISCORD_ALLOW_BOTS. */
  allowBots: boolean;
  limits: AttachmentLimits;
}

type Updated = Message | PartialMessage;

/**
 * MESSAGE_UPDATE where its author edited the message, normalised as a new message (files read
 * again for one addressed to the bot), then to the ingress's edit (src/ingress/edited-message.ts),
 * which replaces the waiting question's text or withdraws it before its agent call. Run in the
 * channel's order, after the message's own create.
 *
 * Discord sends MESSAGE_UPDATE for link embeds and pins too, which are not edits: an update
 * without `edited_timestamp`, or without content (an older partial payload), is not one. A message
 * discord.js still caches is compared with the update (`edited_timestamp` moved, content or files
 * changed). One it no longer caches (over 50 newer in its channel, or an hour old: the questions
 * that wait behind a long queue) comes as a partial old message (`Partials.Message`, gateway.ts)
 * with nothing to compare, as does one in a channel discord.js does not cache (`old` undefined,
 * uncached-channel-edit.ts): the ingress compares the text with the one stored and ignores an
 * update that changes nothing.
 *
 * Discord may hand the edits of one message over out of order: after a hand-over, an edit made
 * once the new session runs comes on its own connection, and may be handled before an older one
 * the catch-up replays (session-handover.ts). Each goes with its `edited_timestamp` (as the ingress
 * takes Slack's `edited.ts`): one older than the edit applied already changes nothing. And with
 * the message's own time (change-timing.ts): an edit made just after a hand-over may come live
 * before the catch-up's replay stores the question; one of a recent message is kept for that
 * store to apply, as on Slack.
 */
export function createMessageEdit(options: MessageEditOptions): (old: Updated | undefined, updated: Updated, withContent: boolean) => Promise<void> {
  const { ctx, allowBots, limits } = options;
  return async function onEdit(old, updated, withContent) {
    const edit = ctx.editMessage;
    const botUserId = updated.client.user?.id;
    if (!edit || !botUserId || updated.partial || updated.editedTimestamp === null) return;
    // The bot's own replies (the ingress ignores them): now seen even when long uncached.
    if (updated.author.id === botUserId) return;
    if (old && !old.partial) {
      if (updated.editedTimestamp === old.editedTimestamp) return;
      if (old.content === updated.content && old.attachments.size === updated.attachments.size) return;
    }
    // Read before the content: discord.js patches a cached message in place, so a later update may
    // change it while this one waits its turn; the time read first is never newer than the text.
    const timing = discordChangeTiming(updated.id, updated.editedTimestamp);
    try {
      let incoming = await normaliseMessage(updated, {
        botUserId,
        allowBots,
        contentIntent: withContent,
        repliedAuthor: async (m) => (await withTimeout(m.fetchReference(), LOOKUP_MS, () => undefined))?.author.id,
      });
      if (!incoming) return;
      if (updated.attachments.size > 0 && (incoming.isDirect || incoming.mentionsBot || incoming.repliesToBot)) {
        ({ message: incoming } = await withAttachments(incoming, updated, limits));
      }
      await edit(incoming, timing && mentionedBefore(old, botUserId) === false ? { ...timing, mentionedBefore: false } : timing);
    } catch (err) {
      // The text is not logged: the edit may have taken a secret out.
      ctx.logger.warn({ messageId: updated.id, ...errorFields(err) }, 'discord: could not apply an edit to a waiting message: it may be answered as first sent');
    }
  };
}

/**
 * Whether the message asked the bot by a mention before the edit, when discord.js still had it
 * as it was; undefined when not known (kept then: a withdrawal kept costs little). False spares
 * the early-change step for the edit of a chat message that never asked the bot.
 */
function mentionedBefore(old: Updated | undefined, botUserId: string): boolean | undefined {
  if (!old || old.partial) return undefined;
  return old.mentions.users.has(botUserId) || stripBotMention(old, botUserId).mentioned;
}
