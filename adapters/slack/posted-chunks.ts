import type { WebClient } from '@slack/web-api';
import type { ReplyTarget } from '../../src/core/message.js';
import { toPlatformError } from './errors.js';

/**
 * Slack has no idempotency key, so every reply chunk the bridge posts carries message metadata
 * naming the bridge message and the chunk. After a crash between Slack storing a post and the
 * bridge recording it, the retry reads the conversation back and posts only what is missing.
 */

/** The metadata `event_type` of every reply chunk (snake_case, like Slack's own examples). */
export const REPLY_EVENT_TYPE = 'agent_bridge_reply';

/** Messages read per page while looking for a chunk. */
const PAGE_SIZE = 200;
/** Pages read at most: 1,000 messages newer than the question. */
export const MAX_LOOKUP_PAGES = 5;

/** What a chunk's post carries: small, and nothing but IDs (no text, no secret). */
export function replyMetadata(messageId: string, chunk: number) {
  return { event_type: REPLY_EVENT_TYPE, event_payload: { message_id: messageId, chunk } };
}

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
  metadata?: { event_type?: string; event_payload?: Record<string, unknown> };
}

export type LookupResult = { found: true } | { found: false; complete: boolean };

/**
 * Looks for chunk `chunk` of the reply to `messageId` among the messages newer than the
 * question: the thread (`conversations.replies`) or, for a DM or top-level reply, the channel
 * (`conversations.history`), with `include_all_metadata`. `complete: false` means the bound of
 * pages was reached first. Throws a PlatformError when Slack could not be read: never guess.
 */
export async function findPostedChunk(client: WebClient, target: ReplyTarget, messageId: string, chunk: number, bot: BotIdentity): Promise<LookupResult> {
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
      if (isChunk(m, messageId, chunk, bot)) return { found: true };
    }
    cursor = res.response_metadata?.next_cursor || undefined;
    if (!cursor) return { found: false, complete: true };
  }
  return { found: false, complete: false };
}

function isChunk(m: MessageWithMetadata, messageId: string, chunk: number, bot: BotIdentity): boolean {
  const fromBot = (bot.botId !== undefined && m.bot_id === bot.botId) || (bot.userId !== undefined && m.user === bot.userId);
  const payload = m.metadata?.event_payload;
  return fromBot && m.metadata?.event_type === REPLY_EVENT_TYPE && payload?.message_id === messageId && Number(payload?.chunk) === chunk;
}
