import { dmBindingChannel } from '../../src/bindings/dm.js';
import type { IncomingMessage, ReplyTarget } from '../../src/core/message.js';
import type { ConversationRef } from '../../src/core/conversation.js';
import { mentionsUser } from './slack-text.js';
import { filesOf, ownText, plainWithForwards } from './shown-text.js';

/** Who the bot is, from `auth.test`. */
export interface BotIdentity {
  userId: string;
  botId?: string;
  teamId?: string;
}

export type NormaliseResult = { kind: 'message'; message: IncomingMessage } | { kind: 'ignored'; reason: string };

/** Message subtypes that are still a person (or bot) saying something new. */
const KEPT_SUBTYPES = new Set(['file_share', 'thread_broadcast', 'bot_message', 'me_message']);
const ID = /^[A-Za-z0-9_-]{1,64}$/;
const TS = /^\d{1,12}\.\d{1,9}$/;

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const id = (v: unknown): string | undefined => (typeof v === 'string' && ID.test(v) ? v : undefined);
const ts = (v: unknown): string | undefined => (typeof v === 'string' && TS.test(v) ? v : undefined);

/** Slackbot's user ID in every workspace. */
export const SLACKBOT_USER_ID = 'USLACKBOT';

/**
 * Turns an Events API envelope (`event_callback` with a `message` or `app_mention` event)
 * into an IncomingMessage, or says why it is not one. Pure and total: any input, however
 * malformed, gives a result and never throws.
 *
 * - `messageId` is `${channel}:${ts}`: the `app_mention` and `message` events of one message,
 *   and every redelivery, share it.
 * - A top-level channel message starts a conversation in its own thread (`threadId` = its
 *   ts), which is where the bot answers; replies in that thread carry `thread_ts` = that ts
 *   and land in the same conversation. A DM is one conversation without a thread, answered
 *   inline, unless the user wrote in a thread there. Its binding is its workspace's `dm:<team>`.
 */
export function normaliseSlackEvent(body: unknown, identity: BotIdentity, now: number = Date.now()): NormaliseResult {
  const ignored = (reason: string): NormaliseResult => ({ kind: 'ignored', reason });
  if (!body || typeof body !== 'object') return ignored('malformed');
  const b = body as Record<string, unknown>;
  const event = b.event;
  if (!event || typeof event !== 'object' || Array.isArray(event)) return ignored('malformed');
  const e = event as Record<string, unknown>;

  const type = e.type;
  // An object's own toString may be anything (it came from JSON): name only its kind.
  if (type !== 'message' && type !== 'app_mention') return ignored(`event:${(typeof type === 'object' && type !== null ? 'object' : String(type)).slice(0, 40)}`);
  const subtype = str(e.subtype);
  if (subtype !== undefined && !KEPT_SUBTYPES.has(subtype)) return ignored(`subtype:${subtype.slice(0, 40)}`);
  // An edit re-sends app_mention with `edited`; the message itself was already handled.
  if (e.edited !== undefined && e.edited !== null) return ignored('edited');

  const channel = id(e.channel);
  const messageTs = ts(e.ts);
  if (!channel || !messageTs) return ignored('malformed');
  const user = id(e.user);
  const botId = id(e.bot_id);
  const userId = user ?? botId;
  if (!userId) return ignored('no_author');
  const team = id(b.team_id) ?? id(e.team) ?? id(identity.teamId) ?? 'unknown';

  const channelType = str(e.channel_type);
  const isDirect = channelType === 'im' || (channelType === undefined && channel.startsWith('D'));
  const rawThread = ts(e.thread_ts);
  const threadTs = rawThread && rawThread !== messageTs ? rawThread : undefined;
  // What the message shows: an app's blocks or attachments when `text` is empty, and what it
  // forwards (marked as forwarded). Only its own words can address the bot.
  const own = ownText(e);
  const { text, ownChars } = plainWithForwards(e, identity.userId);

  const conversation: ConversationRef = {
    platform: 'slack',
    workspaceId: team,
    channelId: channel,
    ...(threadTs ? { threadId: threadTs } : isDirect ? {} : { threadId: messageTs }),
  };
  const reply: ReplyTarget = isDirect && !threadTs
    ? { channelId: channel, messageId: messageTs, inline: true }
    : { channelId: channel, threadId: threadTs ?? messageTs, messageId: messageTs };

  // A forwarded message's files count: they are read as the message's own.
  const files = filesOf(e);
  const profile = e.user_profile && typeof e.user_profile === 'object' ? (e.user_profile as Record<string, unknown>) : {};
  const userName = str(profile.display_name)?.trim() || str(profile.real_name)?.trim() || undefined;

  const message: IncomingMessage = {
    platform: 'slack',
    messageId: `${channel}:${messageTs}`,
    conversation,
    bindingChannelId: isDirect ? dmBindingChannel(team) : channel,
    userId,
    ...(userName ? { userName: userName.slice(0, 80) } : {}),
    text,
    ...(ownChars !== undefined ? { ownChars } : {}),
    isDirect,
    mentionsBot: type === 'app_mention' || mentionsUser(own, identity.userId),
    repliesToBot: threadTs !== undefined && e.parent_user_id === identity.userId,
    fromSelf: (user !== undefined && user === identity.userId) || (botId !== undefined && botId === identity.botId),
    // Slackbot (reminders, auto-responses) posts as a user with no bot_id.
    fromBot: botId !== undefined || subtype === 'bot_message' || user === SLACKBOT_USER_ID,
    hasAttachments: Array.isArray(files) && files.length > 0,
    reply,
    receivedAt: now,
  };
  return { kind: 'message', message };
}
