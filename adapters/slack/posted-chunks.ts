import type { WebClient } from '@slack/web-api';
import type { ReplyTarget } from '../../src/core/message.js';
import { toPlatformError } from './errors.js';

/**
 * Slack has no idempotency key, so every reply chunk (and give-up notice) the bridge posts carries
 * message metadata naming the bridge message and the chunk. After a crash between Slack storing a
 * post and the bridge recording it, the retry reads the conversation back and posts only what is
 * missing. A post Slack took only without its metadata is known by its text.
 */

/** The metadata `event_type` of every reply chunk (snake_case, like Slack's own examples). */
export const REPLY_EVENT_TYPE = 'agent_bridge_reply';

/** Messages read per page while looking for a chunk. */
const PAGE_SIZE = 200;
/** Pages read at most: 1,000 messages newer than the question. */
export const MAX_LOOKUP_PAGES = 5;

/** The metadata `event_type` of a give-up notice (not the agent's words: transcripts label it a notice). */
export const NOTICE_EVENT_TYPE = 'agent_bridge_notice';

/** What a chunk's post carries: small, and nothing but IDs (no text, no secret). */
export function replyMetadata(messageId: string, chunk: number) {
  return { event_type: REPLY_EVENT_TYPE, event_payload: { message_id: messageId, chunk } };
}

/** What a give-up notice's post carries: a message has one at most, so its ID is enough. */
export function noticeMetadata(messageId: string) {
  return { event_type: NOTICE_EVENT_TYPE, event_payload: { message_id: messageId } };
}

/** Which earlier post is looked for: a chunk of the reply, or the give-up notice. */
export type PostedPart = { chunk: number } | { notice: true };

/** Who the bot is, for telling its posts from other apps' (metadata alone could be imitated). */
export interface BotIdentity {
  userId?: string;
  botId?: string;
}

/** `auth.test` once per process; a failure is not cached, so the next call asks again. */
export function botIdentityOf(client: WebClient): () => Promise<BotIdentity> {
  let identity: Promise<BotIdentity> | undefined;
  return () =>
    (identity ??= client.auth.test().then(
      (r) => ({ userId: r.user_id, botId: r.bot_id }),
      (err: unknown) => {
        identity = undefined;
        throw toPlatformError('auth.test', err);
      },
    ));
}

interface MessageWithMetadata {
  user?: string;
  bot_id?: string;
  text?: string;
  metadata?: { event_type?: string; event_payload?: Record<string, unknown> };
}

export type LookupResult = { found: true } | { found: false; complete: boolean };

/** How a post is known when read back: its metadata, or (posted without it) its text. */
export interface PostedLookup {
  messageId: string;
  part: PostedPart;
  /** The text as this attempt would post it. */
  text: string;
  /** The worker's redaction now, applied to text read back before it is compared (ChunkInfo.redact). */
  redact?: (text: string) => string;
}

/**
 * Looks for a post of `lookup.part` (a reply chunk, or the give-up notice) about `messageId`
 * among the messages newer than the question: the thread (`conversations.replies`) or, for a DM
 * or top-level reply, the channel (`conversations.history`), with `include_all_metadata`.
 * `complete: false` means the bound of pages was reached first. Throws a PlatformError when Slack
 * could not be read: never guess.
 */
export async function findPosted(client: WebClient, target: ReplyTarget, lookup: PostedLookup, bot: BotIdentity): Promise<LookupResult> {
  const inThread = !target.inline && target.threadId !== undefined;
  const method = inThread ? 'conversations.replies' : 'conversations.history';
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LOOKUP_PAGES; page++) {
    const args = { channel: target.channelId, oldest: target.messageId, include_all_metadata: true, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) };
    let res;
    try {
      res = inThread ? await client.conversations.replies({ ...args, ts: target.threadId! }) : await client.conversations.history(args);
    } catch (err) {
      throw toPlatformError(method, err);
    }
    for (const m of (res.messages ?? []) as MessageWithMetadata[]) {
      if (isPosted(m, lookup, bot)) return { found: true };
    }
    cursor = res.response_metadata?.next_cursor || undefined;
    if (!cursor) return { found: false, complete: true };
  }
  return { found: false, complete: false };
}

function isPosted(m: MessageWithMetadata, lookup: PostedLookup, bot: BotIdentity): boolean {
  const fromBot = (bot.botId !== undefined && m.bot_id === bot.botId) || (bot.userId !== undefined && m.user === bot.userId);
  if (!fromBot) return false;
  const type = m.metadata?.event_type;
  const payload = m.metadata?.event_payload;
  if (type === REPLY_EVENT_TYPE || type === NOTICE_EVENT_TYPE) {
    if (payload?.message_id !== lookup.messageId) return false;
    return 'chunk' in lookup.part ? type === REPLY_EVENT_TYPE && Number(payload?.chunk) === lookup.part.chunk : type === NOTICE_EVENT_TYPE;
  }
  // Slack refused the metadata and the post went out without it (reply-port.ts): it can only be
  // known by its text. A post with the bridge's metadata is some other reply's, never this one.
  if (!lookup.text || m.text === undefined) return false;
  const read = lookup.redact ? lookup.redact(m.text) : m.text;
  return read.trim() === lookup.text.trim();
}
