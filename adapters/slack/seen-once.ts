import type { Redis } from 'ioredis';
import { errorFields } from '../../src/logger.js';
import type { Logger } from '../../src/logger.js';

/**
 * First-delivery check for Slack messages across every ingress process. Slack sends one
 * message as `app_mention` and `message`, and redelivers when an ack is late; the queue
 * already makes one job of them, but the ingress would still post a notice ("not bound",
 * "over quota") per delivery. A Redis `SET NX` lets only the first through.
 */
export interface SeenOnce {
  /** True for the first delivery of this message ID (and whenever Redis cannot tell). */
  first(messageId: string): Promise<boolean>;
  /** Forgets a message so a redelivery is handled again (the first attempt could not be accepted). */
  forget(messageId: string): Promise<void>;
}

export function createSeenOnce(redis: Redis, prefix: string, logger: Logger, ttlSeconds = 3_600): SeenOnce {
  const key = (messageId: string) => `${prefix}:slack:seen:${messageId}`;
  // While Redis is away, this process still knows what it saw in the last minutes, so the
  // app_mention + message pair of one message gets one answer (and at most one notice).
  const local = new Map<string, number>();
  const seenLocally = (messageId: string) => {
    const now = Date.now();
    for (const [id, at] of local) if (now - at > 5 * 60_000) local.delete(id);
    if (local.has(messageId)) return true;
    if (local.size < 10_000) local.set(messageId, now);
    return false;
  };
  return {
    async first(messageId) {
      if (seenLocally(messageId)) return false;
      try {
        return (await redis.set(key(messageId), '1', 'EX', ttlSeconds, 'NX')) === 'OK';
      } catch (err) {
        // Without Redis the ingress cannot queue either; let it decide and tell the user.
        logger.warn({ ...errorFields(err) }, 'Slack delivery check failed; handing the message on');
        return true;
      }
    },
    async forget(messageId) {
      local.delete(messageId);
      await redis.del(key(messageId)).catch(() => undefined);
    },
  };
}
