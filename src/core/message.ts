import type { ConversationRef, Platform } from './conversation.js';

/** Where and how a reply is posted. Opaque to the core: only the platform's reply port reads it. */
export interface ReplyTarget {
  channelId: string;
  /** Slack thread_ts, or a Discord thread's channel ID is already `channelId`. */
  threadId?: string;
  /** The user's message: Slack ts (for reactions), Discord message ID (replied to). */
  messageId: string;
  /** Slack DM replies go inline rather than in a thread. */
  inline?: boolean;
  /** Multi-workspace Slack: whose installation answers (`team:T…` or `enterprise:E…`). */
  installation?: string;
  /** A Slack assistant thread: progress shows as the thread's status line instead of a reaction. */
  assistantThread?: boolean;
  /**
   * Set when several bridge messages answer one platform message (Discord "Ask the agent" used
   * by two people): keeps their replies apart where a port derives idempotency keys from `messageId`.
   */
  replyKey?: string;
}

/**
 * A platform message after the adapter has normalised it. Adapters fill every field from
 * the event; the ingress pipeline decides what happens to it.
 */
export interface IncomingMessage {
  platform: Platform;
  /**
   * Unique ID of this message on its platform. A redelivered event, or the same message
   * arriving as two events (Slack `app_mention` + `message`), carries the same ID.
   */
  messageId: string;
  /** The conversation: channel, or thread when the message is in one. */
  conversation: ConversationRef;
  /**
   * Channel whose binding applies (a thread's parent channel): its instance answers, and the
   * message counts against its quotas, pending cap and `/agent why`.
   */
  bindingChannelId: string;
  /**
   * Another channel whose binding chooses the instance (and error policy, context) when it has
   * one: a Slack assistant thread's context channel. Quotas, the pending cap and `/agent why`
   * stay `bindingChannelId`'s (the DM's): a private chat must not spend, nor show up in, the
   * channel the user happens to look at.
   */
  instanceChannelId?: string;
  userId: string;
  userName?: string;
  /** Text with the bot's own mention stripped. */
  text: string;
  /**
   * Set when `text` carries more than the sender's words (a forwarded message, quoted after
   * them): the length of those words at its start. What follows may be shortened to fit
   * MAX_MESSAGE_CHARS (see fitForwarded); only the sender's own words being too long refuses it.
   */
  ownChars?: number;
  /** With `ownChars`: where the forwarded part ends, when the message's files were read in after it (they are kept whole). */
  forwardedEnd?: number;
  isDirect: boolean;
  mentionsBot: boolean;
  repliesToBot: boolean;
  fromSelf: boolean;
  fromBot: boolean;
  /**
   * Written by another bot the bridge was told to answer (DISCORD_ALLOW_BOTS). Such a message is
   * answered only when it mentions the bot, and a channel's bot turns are capped: two bots that
   * answer each other would otherwise loop, each turn a billed call.
   */
  fromAllowedBot?: boolean;
  hasAttachments: boolean;
  /** Guild messages arrive without content when the MessageContent intent is missing. */
  contentMissing?: boolean;
  reply: ReplyTarget;
  receivedAt: number;
  /** Send the thread's transcript whatever the binding's context setting (Slack assistant threads). */
  forceThreadContext?: boolean;
  /**
   * `shortcut`: someone used "Ask the agent" on this message. Its answer does not make the bot a
   * participant in the thread (no follow-up mark): one question about someone else's thread
   * must not send every later message there to the agent, each a billed call.
   */
  origin?: 'shortcut';
}
