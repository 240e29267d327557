import { ChannelType, MessageType, cleanContent, type Message } from 'discord.js';
import type { IncomingMessage } from '../../src/core/message.js';
import { attachmentsWithForwarded, embedText, forwardedText, pollText } from './message-body.js';

/** What the normaliser needs to know about the bot and the connection. */
export interface NormaliseContext {
  botUserId: string;
  /** Answer other bots too (DISCORD_ALLOW_BOTS). */
  allowBots: boolean;
  /** False in mention-only mode: the MessageContent intent is not granted. */
  contentIntent: boolean;
  /** Author ID of a message this one replies to, fetched when not cached. Best effort. */
  repliedAuthor?: (message: Message) => Promise<string | undefined>;
  now?: () => number;
}

/** Kinds of message a person writes; joins, pins, boosts and the like are system messages. */
const USER_TYPES: ReadonlySet<MessageType> = new Set([MessageType.Default, MessageType.Reply]);

/** System messages (joins, pins, boosts, thread starters…) are never handed to ingress. */
export function isSystemMessage(message: Pick<Message, 'system' | 'type'>): boolean {
  return message.system || !USER_TYPES.has(message.type);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The bot's managed role (Discord's client turns `@Bot` into a role mention in some servers). */
function botRoleId(message: Message): string | undefined {
  return message.guild?.members.me?.roles.botRole?.id;
}

/** Text with the bot's own mentions removed and other mentions made readable (`@alice`, `#general`). */
export function stripBotMention(message: Message, botUserId: string): { text: string; mentioned: boolean } {
  const ids = [`@!?${escapeRegExp(botUserId)}`];
  const roleId = botRoleId(message);
  if (roleId) ids.push(`@&${escapeRegExp(roleId)}`);
  const pattern = new RegExp(`<(?:${ids.join('|')})>`, 'g');
  const raw = message.content ?? '';
  const mentioned = pattern.test(raw);
  const stripped = raw.replace(pattern, ' ');
  const readable = message.channel ? cleanContent(stripped, message.channel) : stripped;
  return { text: readable.replace(/[ \t]{2,}/g, ' ').trim(), mentioned };
}

async function repliesToBot(message: Message, ctx: NormaliseContext): Promise<boolean> {
  const refId = message.reference?.messageId;
  if (!refId) return false;
  if (message.mentions.repliedUser?.id === ctx.botUserId) return true;
  const cached = message.channel?.messages.cache.get(refId);
  if (cached) return cached.author?.id === ctx.botUserId;
  if (message.mentions.repliedUser) return false;
  try {
    return (await ctx.repliedAuthor?.(message)) === ctx.botUserId;
  } catch {
    return false;
  }
}

/**
 * Turns a discord.js message into the platform-neutral `IncomingMessage`. Returns `undefined`
 * for system messages. Never throws on odd input: missing parts read as absent.
 */
export async function normaliseMessage(message: Message, ctx: NormaliseContext): Promise<IncomingMessage | undefined> {
  if (isSystemMessage(message)) return undefined;
  const channel = message.channel;
  const isThread = channel?.isThread() ?? false;
  const parentId = isThread && channel && 'parentId' in channel ? (channel.parentId ?? undefined) : undefined;
  const channelId = message.channelId;
  const isDirect = !message.guildId && (channel?.type === ChannelType.DM || channel?.type === undefined);
  const conversationChannel = isThread && parentId ? parentId : channelId;
  const { text, mentioned } = stripBotMention(message, ctx.botUserId);
  const repliedUserIsBot = message.mentions.repliedUser?.id === ctx.botUserId;
  // A pinging reply lists the replied-to author in `mentions`: that alone is a reply, not a mention.
  const mentionsBot =
    mentioned || (message.mentions.users.has(ctx.botUserId) && !(repliedUserIsBot && message.mentions.users.size === 1));
  const fromSelf = message.author.id === ctx.botUserId;
  const authorIsBot = message.author.bot || message.webhookId !== null;
  const hasAttachments = attachmentsWithForwarded(message).attachments.size > 0 || message.stickers.size > 0;
  // A bot's embeds, a poll and a forward's messages are what such a message says (its content is empty).
  const ownWords = [text, embedText(message.embeds), pollText(message.poll)].filter(Boolean).join('\n\n');
  // A forward comes last: it alone may be shortened to fit (see fitForwarded).
  const forwarded = forwardedText(message);
  const fullText = [ownWords, forwarded].filter(Boolean).join('\n\n');
  // Without the intent, Discord blanks content unless the bot is mentioned (or it is a DM).
  const contentMissing =
    !ctx.contentIntent && !isDirect && !fromSelf && !message.mentions.users.has(ctx.botUserId) && !message.content;

  return {
    platform: 'discord',
    messageId: message.id,
    conversation: {
      platform: 'discord',
      workspaceId: message.guildId ?? 'dm',
      channelId: conversationChannel,
      ...(isThread ? { threadId: channelId } : {}),
    },
    bindingChannelId: isDirect ? 'dm' : conversationChannel,
    userId: message.author.id,
    userName: message.member?.displayName ?? message.author.globalName ?? message.author.username,
    text: fullText,
    ...(forwarded ? { ownChars: ownWords.length } : {}),
    isDirect,
    mentionsBot,
    repliesToBot: fromSelf ? false : await repliesToBot(message, ctx),
    fromSelf,
    fromBot: !fromSelf && authorIsBot && !ctx.allowBots,
    ...(!fromSelf && authorIsBot && ctx.allowBots ? { fromAllowedBot: true } : {}),
    hasAttachments,
    ...(contentMissing ? { contentMissing: true } : {}),
    reply: { channelId, messageId: message.id, ...(isThread ? { threadId: channelId } : {}) },
    receivedAt: (ctx.now ?? Date.now)(),
  };
}
