import type { Platform } from '../core/conversation.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';

/**
 * The ends of a queued message other than the worker's answer (`replied`) or its give-up
 * (`gave_up`, give-up-steps.ts), counted in `agent_bridge_messages_total` and logged with IDs and
 * a plain reason (never the text): an operator who alerts on "taken in but never finished" needs
 * every end counted. Once the bridge is idle, per platform, summed over processes: ingress
 * `queued` = replied + gave_up + withdrawn + lost (docs/operations.md). A counter increment and a
 * log line: no Redis round trip. Every end's line, here or in the worker, has `ended` (the
 * outcome) and `reason`.
 */
export class MessageEnds {
  constructor(
    private readonly metrics: Metrics,
    private readonly logger: Logger,
  ) {}

  /**
   * Messages nobody waits an answer for any more, forgotten before a worker reached them (their
   * workspace removed the app): one line per conversation.
   */
  withdrawn(platform: Platform, conversationId: string, messageIds: readonly string[], reason: string): void {
    if (messageIds.length === 0) return;
    this.metrics.messages.inc({ platform, outcome: 'withdrawn' }, messageIds.length);
    this.logger.info({ platform, conversationId, messageIds, ended: 'withdrawn', reason }, `queued messages withdrawn: ${reason}`);
  }

  /** A message whose stored record was gone when the worker reached it: nobody is answered or told. */
  lost(platform: Platform, conversationId: string, messageId: string, reason: string): void {
    this.metrics.messages.inc({ platform, outcome: 'lost' });
    this.logger.error({ platform, conversationId, messageId, ended: 'lost', reason }, `message record missing; skipping it (${reason})`);
  }
}

/** The platform a conversation ID names (core/conversation.ts encodes it first). */
export function platformOfConversation(conversationId: string): Platform {
  const colon = conversationId.indexOf(':');
  return decodeURIComponent(colon < 0 ? conversationId : conversationId.slice(0, colon)) as Platform;
}
