import type { Platform } from './conversation.js';
import type { ReplyTarget } from './message.js';

/** One earlier message of a thread, for the optional thread context. */
export interface ThreadMessage {
  author: string;
  text: string;
  isBot: boolean;
  /**
   * Not a message: the place where the thread's later messages could not be read (the platform
   * limited the read, or the thread is longer than a read takes). The agent is told so.
   */
  gap?: true;
}

/** Which chunk of which reply a post is. */
export interface ChunkInfo {
  /** The bridge message this reply answers (stable across retries and workers). */
  messageId: string;
  /** Number of chunks in the whole reply; the chunk with `index === total - 1` is the last. */
  total: number;
  /**
   * True when an earlier attempt started posting this chunk and never recorded it as posted
   * (the worker died or lost its lock in between): the port must look for the chunk first and
   * post it only if it is not there.
   */
  mayExist: boolean;
  /** The ID the agent service gave this reply (`messageId` of `POST /chat`), for feedback. */
  agentMessageId?: string;
  /** The agent instance that wrote the reply, for feedback (the click records against it). */
  instanceId?: string;
  /**
   * The worker's redaction as it is now. A port that looks for an earlier post by its text puts
   * the text it reads back through it before comparing: a credential added since that post
   * changes the chunk (it is redacted now), not what the platform holds.
   */
  redact?: (text: string) => string;
}

/** Which message a give-up notice is about, so a resumed one is not said twice. */
export interface NoticeInfo {
  /** The bridge message the notice is about (stable across retries and workers). */
  messageId: string;
  /**
   * True when a worker that stopped before finishing may have posted this notice already: the
   * port looks for it first and posts it only if it is not there.
   */
  mayExist: boolean;
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
  /**
   * Posts one rendered chunk. Mentions in it must never ping anyone. `info` (given by the
   * worker) says which reply and chunk this is: a port uses it to make the post idempotent
   * (e.g. Slack message metadata) and to decorate the last chunk (feedback buttons).
   */
  postChunk(target: ReplyTarget, chunk: string, index: number, info?: ChunkInfo): Promise<void>;
  /**
   * Posts a short plain-words notice (an error, a hint). `info` marks a give-up notice: the port
   * makes it findable as it does reply chunks, and with `mayExist` looks for it before posting.
   */
  postNotice(target: ReplyTarget, text: string, info?: NoticeInfo): Promise<void>;
  /**
   * Right before the (billed) agent call: throws the PlatformError a post there would meet when
   * the port knows already that it cannot post (the platform refused its token): the worker
   * then gives up without calling the agent. Makes no platform call unless re-checking one.
   */
  ready?(target: ReplyTarget): Promise<void>;
  /** Shows that the agent is working (Slack reaction, Discord typing). Best effort. */
  startWorking?(target: ReplyTarget): Promise<void>;
  /** Ends the working indicator; `failed` adds the warning reaction where the platform has one. */
  stopWorking?(target: ReplyTarget, outcome: 'ok' | 'failed'): Promise<void>;
  /** Earlier messages of the thread, oldest first, excluding the triggering message. */
  fetchThread?(target: ReplyTarget, limit: number): Promise<ThreadMessage[]>;
  /**
   * A person's name as the thread's transcript shows it, for a message that arrived with only
   * an ID (the speaker of the new message is then named as the earlier lines are).
   */
  nameOf?(target: ReplyTarget, userId: string): Promise<string | undefined>;
  /** Releases what the port holds open (a Redis subscription) at shutdown; the port is not used after. */
  close?(): Promise<void>;
}

/** The ports the worker can post through, by platform. */
export type ReplyPorts = Partial<Record<Platform, ReplyPort>>;
