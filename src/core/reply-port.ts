import type { Platform } from './conversation.js';
import type { ReplyTarget } from './message.js';

/** One earlier message of a thread, for the optional thread context. */
export interface ThreadMessage {
  author: string;
  text: string;
  isBot: boolean;
}

/**
 * What a worker needs from a platform to answer. Each adapter implements it with its
 * platform's Web/REST client only (no gateway, no socket), so worker processes stay light.
 * Methods throw `PlatformError` (src/core/errors.ts) so the worker can decide retry or give up.
 */
export interface ReplyPort {
  readonly platform: Platform;
  /**
   * Converts the agent's Markdown to the platform's format and splits it into messages
   * within the platform's limit (paragraph and code-fence boundaries; split fences reopened).
   */
  render(markdown: string): string[];
  /** Posts one rendered chunk. Mentions in it must never ping anyone. */
  postChunk(target: ReplyTarget, chunk: string, index: number): Promise<void>;
  /** Posts a short plain-words notice (an error, a hint). */
  postNotice(target: ReplyTarget, text: string): Promise<void>;
  /** Shows that the agent is working (Slack reaction, Discord typing). Best effort. */
  startWorking?(target: ReplyTarget): Promise<void>;
  /** Ends the working indicator; `failed` adds the warning reaction where the platform has one. */
  stopWorking?(target: ReplyTarget, outcome: 'ok' | 'failed'): Promise<void>;
  /** Earlier messages of the thread, oldest first, excluding the triggering message. */
  fetchThread?(target: ReplyTarget, limit: number): Promise<ThreadMessage[]>;
}

/** The ports the worker can post through, by platform. */
export type ReplyPorts = Partial<Record<Platform, ReplyPort>>;
