import type { IncomingMessage } from '../core/message.js';

/** Why a message got no job. `/agent why` shows these; every drop is logged at debug. */
export type DropReason =
  | 'not_bound'
  | 'not_addressed'
  | 'self'
  | 'bot'
  | 'content_missing'
  | 'empty'
  | 'too_long'
  | 'over_quota'
  /** The channel already had MAX_PENDING_PER_CHANNEL unfinished messages. */
  | 'channel_busy'
  /** Per-workspace accounts: the workspace's admin has not run `setup`. */
  | 'no_account'
  | 'redis_unavailable';

export type IngressResult =
  | { status: 'queued'; jobId: string }
  | { status: 'duplicate'; jobId: string }
  | { status: 'dropped'; reason: DropReason };

/**
 * The one entry point of every adapter: normalise, then hand the message here. It decides
 * whether the bot is addressed, finds the binding, checks quotas, enqueues, and posts any
 * notice (hint, over quota, too long) through the platform's reply port itself.
 */
export interface Ingress {
  handle(message: IncomingMessage, options?: HandleOptions): Promise<IngressResult>;
}

export interface HandleOptions {
  /**
   * The adapter's first-delivery claim, when it left it to the ingress (Slack sends one message
   * as `app_mention` and `message`, and redelivers late acks). The ingress takes it only before
   * a step a repeat must not take again: a notice, a drop record, a quota charge. A message
   * that is queued needs none: the mailbox's push drops a repeat by itself, so the common
   * case costs no round trip for it. False: another delivery has it (a duplicate).
   */
  claim?: () => Promise<boolean>;
}
