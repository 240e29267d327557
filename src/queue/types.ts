import type { Platform } from '../core/conversation.js';
import type { ReplyTarget } from '../core/message.js';
import type { ContextMode, ErrorPolicy } from '../bindings/types.js';

/**
 * One accepted message, as stored in its conversation's mailbox. Holds no secret: only
 * what the worker needs to call the agent and answer in the right place.
 */
export interface ChatMessage {
  platform: Platform;
  /** Platform message ID (the dedupe key). */
  messageId: string;
  conversationId: string;
  workspaceId: string;
  /** Channel whose binding applied. */
  channelId: string;
  instanceId: string;
  text: string;
  userId: string;
  userName?: string;
  reply: ReplyTarget;
  receivedAt: number;
  errorPolicy: ErrorPolicy;
  context: ContextMode;
  /** `shortcut`: asked with "Ask the agent"; its answer sets no follow-up mark (IncomingMessage.origin). */
  origin?: 'shortcut';
}

/** The BullMQ job's data: a pointer into the mailbox, small and secret-free. */
export interface ChatJobData {
  platform: Platform;
  conversationId: string;
  messageId: string;
  instanceId: string;
  /** For `/agent why` when the message waits behind a retried one. */
  channelId?: string;
  userId?: string;
}

/** Progress of a message, recorded before each visible step so a retry resumes where it stopped. */
export interface MessageProgress {
  /** The agent's answer, once it came. */
  reply?: string;
  /** How many rendered chunks are already posted. */
  posted: number;
  /** Failed attempts so far (retryable errors only). */
  attempts: number;
  /** Times the message met a rate limit (agent or platform). */
  limited: number;
  /**
   * Agent calls started that recorded neither an answer nor an error: with no `reply`, the
   * worker died during each (or, marked by the read that returned the message, just before
   * the call). 0 when none.
   */
  started: number;
  /** The chunk whose post was under way when last recorded (it may have reached the platform). */
  posting?: number;
  /** The agent service's ID of the reply (`messageId` of `POST /chat`), for feedback. */
  agentMessageId?: string;
  /**
   * The worker gave up on the message (JSON of {@link GaveUp}), recorded before the user is told:
   * a worker that resumes it tells them again, and never calls the agent for it.
   */
  gaveUp?: string;
}

/** What a give-up mark holds: the reference, and the notice for the user (none when the binding posts none). */
export interface GaveUp {
  ref: string;
  notice?: string;
  /**
   * Its sender deleted the message before it was answered, or edited it so it asks nothing:
   * nothing is said, nothing is called.
   */
  withdrawn?: true;
  /** Why it was withdrawn, in plain words for the log (no message text); absent: an edit. */
  why?: string;
}

/** {@link GaveUp.why} of a message its sender deleted, as the worker that passes it by logs it (give-up-steps.ts). */
export const DELETED_WHY = 'deleted before it was answered';

export const QUEUE_NAME = 'chat';

/** BullMQ job ID: one per platform message, so a redelivery never makes a second job. */
export function jobIdFor(platform: Platform, messageId: string): string {
  // BullMQ refuses most custom IDs with ':' (its key separator).
  return `${platform}-${messageId.replace(/[%:]/g, (c) => (c === '%' ? '%25' : '%3A'))}`;
}
