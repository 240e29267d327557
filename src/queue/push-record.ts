/** What the mailbox's push stores for a message, and what its script's reply says (push-7.lua). */
import type { ChatMessage } from './types.js';

/**
 * `held`: another job holds the conversation and will drain this message (queue no job);
 * `behindRetry`: and the message it is on waits out a retry or rate limit. Not held: queue
 * the job whose ID was given, which holds the lease already (or queue one when none was given).
 */
export type PushResult =
  | { status: 'queued'; pending: number; held: boolean; behindRetry: boolean }
  | { status: 'duplicate'; held: boolean }
  /** The channel already has `maxPending` unfinished messages: nothing was stored. */
  | { status: 'busy'; pending: number };

/** A Lua script's keys and arguments. */
export interface LuaCall {
  keys: string[];
  args: Array<string | number>;
}

/** What push-7.lua's reply says. */
export function pushResult(reply: unknown): PushResult {
  const [status, pending, held] = reply as [number, number, number];
  // 3: the lease is `jobId`'s own (a redelivery): not held by another job, so queue it again.
  const byAnother = held === 1 || held === 2;
  if (status === 1) return { status: 'queued', pending, held: byAnother, behindRetry: held === 2 };
  if (status === -1) return { status: 'busy', pending };
  return { status: 'duplicate', held: byAnother };
}

/**
 * A message's record as the push stores it: JSON with `text` its last key, so an edit that came
 * before the message replaces the text in the push script without decoding the record.
 */
export function payloadOf(message: ChatMessage): string {
  const { text, ...rest } = message;
  return JSON.stringify({ ...rest, text });
}

