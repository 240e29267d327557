import type { Redis } from 'ioredis';
import { EARLY_CHANGE_SECONDS } from './early-change.js';
import { luaScript } from './lua-script.js';
import type { QueueKeys } from './keys.js';
import type { ChatMessage, GaveUp } from './types.js';

const edit = luaScript('edit-4.lua');

/**
 * What became of a sender's edit of a message (editStoredMessage): `edited` (the agent gets the
 * new text) or `withdrawn` (it is not asked at all) before its call; `too_late` once its call
 * started (the edit changes nothing); `absent` when no unfinished message has that ID;
 * `outdated` when a newer edit of it was applied already (this one arrived late: it changes nothing).
 */
export type EditResult = 'edited' | 'withdrawn' | 'too_late' | 'absent' | 'outdated';

/** The message as stored (an edit keeps everything but its text), or undefined when none waits. */
export async function storedMessage(redis: Redis, keys: QueueKeys, conversationId: string, messageId: string): Promise<ChatMessage | undefined> {
  const raw = await redis.hget(keys.messages(conversationId), messageId);
  return raw ? (JSON.parse(raw) as ChatMessage) : undefined;
}

/**
 * Replaces a waiting message's text (`text`), or withdraws it (`text` undefined), unless its
 * agent call started (scripts/edit-4.lua), and unless a newer edit (by `order`) was applied. A compare-and-set on the stored record: read, edit,
 * write only if nothing changed it meanwhile, else read again. The edit path's own round trips:
 * the path of a new message has none more.
 */
export async function editStoredMessage(
  redis: Redis,
  keys: QueueKeys,
  conversationId: string,
  messageId: string,
  text: string | undefined,
  ref: string,
  /** AGENT_CALL_GUARANTEE=at-most-once: the worker reads a head without marking its call started. */
  atMostOnce = false,
  /** The edit's place among the message's edits (digits that sort as they were made), when known. */
  order = '',
): Promise<EditResult> {
  const mark = JSON.stringify({ ref, withdrawn: true } satisfies GaveUp);
  for (let attempt = 0; attempt < 5; attempt++) {
    const raw = await redis.hget(keys.messages(conversationId), messageId);
    if (!raw) return 'absent';
    const edited = text === undefined ? '' : JSON.stringify({ ...(JSON.parse(raw) as ChatMessage), text });
    const r = Number(
      await edit(
        redis,
        [keys.messages(conversationId), keys.mailbox(conversationId), keys.lease(conversationId), keys.earlyChange(conversationId, messageId)],
        [messageId, raw, edited, mark, atMostOnce ? '1' : '0', order, EARLY_CHANGE_SECONDS],
      ),
    );
    if (r === 0) return 'absent';
    if (r === 1) return 'too_late';
    if (r === 2) return text === undefined ? 'withdrawn' : 'edited';
    if (r === 4) return 'outdated';
  }
  // Rewritten under us five times (only edits write the record once stored): the last edit won.
  return 'too_late';
}
