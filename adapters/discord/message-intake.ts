import type { Message } from 'discord.js';
import { errorFields } from '../../src/logger.js';
import { withTimeout } from '../../src/core/with-timeout.js';
import type { AdapterContext } from '../../src/core/platform-context.js';
import type { IncomingMessage } from '../../src/core/message.js';
import { normaliseMessage } from './normalise-message.js';
import { withAttachments } from './attachments.js';
import { attachmentsWithForwarded, forwardedSnapshots } from './message-body.js';
import { createForwardPairing } from './forward-pairing.js';
import { botMayNotPost } from './can-post.js';
import { oncePer } from '../../src/core/once-per.js';

/** A replied-to message or an unannounced thread not in the cache is fetched; past this it is let go. */
const LOOKUP_MS = 3_000;

/** How often a channel where the bot may not post is named in the log. */
const MAY_NOT_POST_WARN_MS = 10 * 60_000;

export interface MessageIntakeOptions {
  ctx: Pick<AdapterContext, 'bindings' | 'ingress' | 'replyPort' | 'logger'>;
  /** DISCORD_ALLOW_BOTS. */
  allowBots: boolean;
  /** MAX_ATTACHMENT_BYTES and MAX_MESSAGE_CHARS. */
  limits: { maxBytes: number; maxChars: number };
}

/**
 * From a gateway message to the ingress: normalised, with its text files when the bot may answer
 * it, and never sent where the bot could not post the answer. Returns the handler the adapter
 * runs for each MESSAGE_CREATE (in order per channel), told whether the Message Content intent
 * is on.
 */
export function createMessageIntake(options: MessageIntakeOptions): (message: Message, withContent: boolean) => Promise<void> {
  const { ctx, allowBots, limits } = options;
  const logger = ctx.logger;

  /** Files are downloaded only for messages the bot may answer, not for every chat line. */
  async function mayAnswer(m: IncomingMessage): Promise<boolean> {
    if (m.fromSelf || m.fromBot) return false;
    if (m.isDirect || m.mentionsBot || m.repliesToBot) return true;
    const binding = await ctx.bindings.get('discord', m.bindingChannelId);
    // A thread of a bound channel may be a follow-up the bot answers without a mention.
    return binding !== undefined && (binding.mode === 'all' || m.conversation.threadId !== undefined);
  }

  /**
   * A thread whose THREAD_CREATE the bot missed reaches discord.js first as a message: a partial
   * thread with no parent, whose binding would then be looked up under the thread's own ID. One
   * `GET /channels/{id}` fills the parent in (discord.js patches the cached thread in place).
   */
  async function learnThreadParent(message: Message): Promise<void> {
    const channel = message.channel;
    if (!channel.isThread() || channel.parentId) return;
    await withTimeout(message.client.channels.fetch(channel.id, { force: true }), LOOKUP_MS, () => undefined).catch((err: unknown) =>
      logger.warn({ ...errorFields(err), channelId: channel.id }, 'discord: could not learn the parent of a thread it was never told about'),
    );
  }

  /** Once per channel per 10 minutes. */
  const firstInWindow = oncePer(MAY_NOT_POST_WARN_MS);
  function warnMayNotPost(message: Message): void {
    if (!firstInWindow(message.channelId)) return;
    logger.warn(
      { guildId: message.guildId, channelId: message.channelId, messageId: message.id },
      'discord: the bot can read this channel but may not post in it, so messages there are not sent to the agent; ' +
        "give the bot's role View Channel and Send Messages (Send Messages in Threads for threads) there, or unbind the channel",
    );
  }

  const pairing = createForwardPairing();

  /** A forward and its comment (two messages): see forward-pairing.ts. */
  async function pairForward(message: Message, incoming: IncomingMessage): Promise<IncomingMessage> {
    if (incoming.fromSelf || incoming.fromBot || incoming.isDirect) return incoming;
    const key = `${message.channelId}:${message.author.id}`;
    const at = message.createdTimestamp;
    if (forwardedSnapshots(message).length > 0) {
      if (await mayAnswer(incoming)) return incoming;
      return pairing.forward(key, at, incoming.text) ? { ...incoming, mentionsBot: true } : incoming;
    }
    if (!incoming.mentionsBot && !incoming.repliesToBot) return incoming;
    const forwarded = pairing.addressed(key, at);
    // The comment is the sender's own words; the forward after it may be shortened to fit.
    if (!forwarded) return incoming;
    const own = incoming.text.slice(0, incoming.ownChars ?? incoming.text.length);
    return { ...incoming, text: [incoming.text, forwarded].filter(Boolean).join('\n\n'), ownChars: own.length };
  }

  return async function onMessage(message: Message, withContent: boolean): Promise<void> {
    const botUserId = message.client.user?.id;
    if (!botUserId) return;
    // The channel was deleted while this channel's earlier messages were taken in (discord.js
    // dropped it): no answer can be posted there, so the message is not sent to the agent.
    if ((message.channel as Message['channel'] | null) === null) {
      logger.info({ messageId: message.id, channelId: message.channelId, guildId: message.guildId }, 'discord: the channel of a message was deleted before it was taken in: not sent to the agent');
      return;
    }
    await learnThreadParent(message);
    let incoming = await normaliseMessage(message, {
      botUserId,
      allowBots,
      contentIntent: withContent,
      repliedAuthor: async (m) => (await withTimeout(m.fetchReference(), LOOKUP_MS, () => undefined))?.author.id,
    });
    if (!incoming) {
      logger.debug({ messageId: message.id, type: message.type }, 'discord system message ignored');
      return;
    }
    if (botMayNotPost(message) && (await mayAnswer(incoming))) {
      warnMayNotPost(message);
      return;
    }
    incoming = await pairForward(message, incoming);
    let notice: string | undefined;
    const files = attachmentsWithForwarded(message);
    if (files.attachments.size > 0 && (await mayAnswer(incoming))) {
      ({ message: incoming, notice } = await withAttachments(incoming, files, limits));
    }
    const result = await ctx.ingress.handle(incoming);
    logger.debug({ messageId: message.id, status: result.status }, 'discord message handled');
    if (notice && result.status === 'queued') {
      // Not awaited: this channel's next message must not wait for the notice's post.
      void ctx.replyPort.postNotice(incoming.reply, notice).catch((err: unknown) => logger.warn({ ...errorFields(err) }, 'could not post the files notice'));
    }
  };
}
