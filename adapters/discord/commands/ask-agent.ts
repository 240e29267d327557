import { MessageFlags, PermissionFlagsBits, type Message, type MessageContextMenuCommandInteraction } from 'discord.js';
import type { BindingStore } from '../../../src/bindings/types.js';
import type { IncomingMessage } from '../../../src/core/message.js';
import type { Ingress, IngressResult } from '../../../src/ingress/types.js';
import { normaliseMessage } from '../normalise-message.js';
import { attachmentsWithForwarded } from '../message-body.js';
import { hasVisibleText } from '../../../src/core/visible-text.js';
import { withHeading } from '../../../src/ingress/forwarded-fit.js';

export interface AskDeps {
  ingress: Ingress;
  bindings: Pick<BindingStore, 'get'>;
  /** Adds the text of a message's text-like attachments (and notes skipped ones) to its text. */
  withAttachments?: (message: IncomingMessage, source: Pick<Message, 'attachments'>) => Promise<{ message: IncomingMessage; notice?: string }>;
}

const EPHEMERAL = MessageFlags.Ephemeral;
const NO_MENTIONS = { parse: [] as [] };

export const ASK_ANSWERS = {
  notBound:
    "This channel isn't connected to an agent, so there is nobody to ask here. An admin can connect one with `/agent bind`.",
  cannotPost:
    "I may not post in this channel, so I can't answer here. An admin can give me View Channel and Send Messages (Send Messages in Threads for a thread) here, or ask me in a direct message.",
  systemMessage: 'That is a system message: there is nothing to ask the agent about.',
  empty: 'That message has no text the agent could read.',
  queued: (instanceId: string) => `Asked **${instanceId}**: the answer will appear as a reply to that message.`,
  duplicate: 'You already asked about this message: the answer is (or will be) a reply to it.',
  dropped: (reason: string) =>
    reason === 'over_quota'
      ? 'Not sent: the usage limit for this channel or for you is reached. Try again later.'
      : reason === 'too_long'
        ? 'Not sent: that message is longer than the agent accepts.'
        : reason === 'redis_unavailable'
          ? "Not sent: the bridge couldn't queue it just now. Try again in a minute."
          : `Not sent (${reason}). \`/agent why\` explains recent drops.`,
};

/**
 * One ask per person per message: asking again about the same message is a duplicate (the
 * first answer stands), while two people asking get an answer each.
 */
export function askMessageId(targetId: string, userId: string): string {
  return `${ASK_PREFIX}${targetId}-${userId}`;
}

/** What every ask's ID starts with. */
export const ASK_PREFIX = 'ask-';

/** The message an ask (by its ID) is about. */
export function askTargetOf(messageId: string): string | undefined {
  return messageId.startsWith(ASK_PREFIX) ? messageId.slice(ASK_PREFIX.length).split('-')[0] : undefined;
}

/**
 * Whether the bot may post the answer where the command was used. A command works in any
 * channel, also one where the bot may not post; Discord says what it may do there in the
 * interaction's `app_permissions` (overwrites, timeout and thread rules applied).
 */
function botMayPostHere(i: MessageContextMenuCommandInteraction): boolean {
  const p = i.appPermissions;
  if (!p.has(PermissionFlagsBits.ViewChannel)) return false;
  const { SendMessages, SendMessagesInThreads } = PermissionFlagsBits;
  // A channel discord.js has not cached may be either kind: only a definite "no" stops the question.
  if (!i.channel) return p.has(SendMessages) || p.has(SendMessagesInThreads);
  return p.has(i.channel.isThread() ? SendMessagesInThreads : SendMessages);
}

function authorName(target: MessageContextMenuCommandInteraction['targetMessage']): string {
  return target.member?.displayName ?? target.author.globalName ?? target.author.username;
}

/**
 * "Ask the agent" on a message: its text and its author's name go to the instance bound to its
 * channel, through ingress like any message (quotas, dedupe, `/agent why`); the worker answers
 * as a reply to that message. The person who asked hears what happened privately.
 */
export async function onAskAgent(i: MessageContextMenuCommandInteraction, deps: AskDeps): Promise<void> {
  await i.deferReply({ flags: EPHEMERAL });
  const say = (content: string) => i.editReply({ content, allowedMentions: NO_MENTIONS });
  const target = i.targetMessage;
  const botUserId = i.client.user.id;
  const base = await normaliseMessage(target, { botUserId, allowBots: true, contentIntent: true });
  if (!base) return void (await say(ASK_ANSWERS.systemMessage));

  const lookup = await deps.bindings.get('discord', base.bindingChannelId);
  const binding = lookup ?? (base.isDirect ? await deps.bindings.get('discord', 'dm') : undefined);
  if (!binding) return void (await say(ASK_ANSWERS.notBound));
  // Before the billed call: an answer the bot may not post would be paid for and never seen.
  if (!botMayPostHere(i)) return void (await say(ASK_ANSWERS.cannotPost));

  const member = i.member && 'displayName' in i.member ? i.member.displayName : undefined;
  const messageId = askMessageId(target.id, i.user.id);
  let asked: IncomingMessage = {
    ...base,
    messageId,
    reply: { ...base.reply, replyKey: messageId },
    userId: i.user.id,
    userName: member ?? i.user.globalName ?? i.user.username,
    mentionsBot: true,
    repliesToBot: false,
    fromSelf: false,
    fromBot: false,
    contentMissing: undefined,
    origin: 'shortcut',
  };
  let notice: string | undefined;
  const files = attachmentsWithForwarded(target);
  if (deps.withAttachments && files.attachments.size > 0) ({ message: asked, notice } = await deps.withAttachments(asked, files));
  // Checked here, privately: the ingress would answer an empty ask with a public notice under the message.
  if (!hasVisibleText(asked.text)) return void (await say([ASK_ANSWERS.empty, notice].filter(Boolean).join('\n')));
  // Only what the message forwards may be shortened: its own words are the question.
  asked = { ...withHeading(asked, `${authorName(target)} wrote:\n`), hasAttachments: false };

  const result: IngressResult = await deps.ingress.handle(asked);
  if (result.status === 'queued') return void (await say([ASK_ANSWERS.queued(binding.instanceId), notice].filter(Boolean).join('\n')));
  if (result.status === 'duplicate') return void (await say(ASK_ANSWERS.duplicate));
  await say(ASK_ANSWERS.dropped(result.reason));
}
