import type { Redis } from 'ioredis';
import type { Platform } from '../core/conversation.js';
import { errorFields, type Logger } from '../logger.js';
import { queueKeys } from '../queue/keys.js';
import { luaScript } from '../queue/lua-script.js';

/**
 * How far a platform message got, the value of its one key `seen:<platform>:<messageId>`
 * (src/queue/keys.ts). `delivered`: an adapter took its first delivery (Slack's `app_mention`
 * and `message` of one message, a redelivery after a late ack, a double submit in the
 * playground are the later ones). `queued`: the mailbox accepted it (scripts/push-6.lua sets
 * it in the same script that stores the message); from then on a push is a duplicate.
 */
export const SEEN = { delivered: 'delivered', queued: 'queued' } as const;

/**
 * The one record of which platform messages the bridge has seen, owned by ingress. Adapters
 * claim a message's first delivery, so repeats get no second pass through ingress (no second
 * notice); the mailbox's push marks it queued, so a redelivery is never stored or billed twice.
 */
export interface SeenLedger {
  /**
   * True for the first delivery of this message (and whenever Redis cannot tell, unless this
   * process saw it in the last minutes): claims it as `delivered`.
   */
  first(platform: Platform, messageId: string): Promise<boolean>;
  /**
   * `first` in two halves, for an adapter whose message may need no claim at all: whether this
   * process saw the message in the last minutes (no round trip), and the claim in Redis, which
   * the ingress takes only before a step a repeat must not take again (see Ingress.handle).
   */
  firstHere(platform: Platform, messageId: string): boolean;
  claim(platform: Platform, messageId: string): Promise<boolean>;
  /** Releases a claim whose message could not be handed on, so a redelivery is handled again. A queued message stays seen. */
  forget(platform: Platform, messageId: string): Promise<void>;
  /** Whether the mailbox accepted this message (a redelivery, not to be charged again); the `1` of earlier versions counts. */
  accepted(platform: Platform, messageId: string): Promise<boolean>;
}

/** The part of the ledger an adapter uses (through its `AdapterContext`). */
export type FirstDelivery = Pick<SeenLedger, 'first' | 'firstHere' | 'claim' | 'forget'>;

/** Options of {@link createSeenLedger}. */
export interface SeenLedgerOptions {
  redis: Redis;
  /** The bridge's key base, `<QUEUE_PREFIX>:chat`, as the mailbox's. */
  prefix: string;
  logger: Logger;
  /**
   * How long a first-delivery claim lasts when the message is not queued (the mailbox's seen
   * TTL replaces it when it is).
   * @defaultValue 3600 (Slack redelivers within minutes)
   */
  claimTtlSeconds?: number;
}

const forgetScript = luaScript('forget-seen-1.lua');

/** How long, and how many, first deliveries a process remembers for itself while Redis is away. */
const LOCAL_MS = 5 * 60_000;
const LOCAL_MAX = 10_000;

export function createSeenLedger(options: SeenLedgerOptions): SeenLedger {
  const { redis, logger } = options;
  const keys = queueKeys(options.prefix);
  const claimTtl = options.claimTtlSeconds ?? 3_600;
  // While Redis is away, this process still knows what it saw in the last minutes, so the
  // app_mention + message pair of one message gets one answer (and at most one notice).
  const local = new Map<string, number>();
  const seenLocally = (id: string) => {
    const now = Date.now();
    // Oldest first (a Map keeps insertion order): stop at the first one still fresh, so a
    // busy process does not walk all 10,000 entries for every event.
    for (const [seen, at] of local) {
      if (now - at <= LOCAL_MS) break;
      local.delete(seen);
    }
    if (local.has(id)) return true;
    if (local.size < LOCAL_MAX) local.set(id, now);
    return false;
  };
  const localId = (platform: Platform, messageId: string) => `${platform}:${messageId}`;

  const claim = async (platform: Platform, messageId: string) => {
    try {
      return (await redis.set(keys.seen(platform, messageId), SEEN.delivered, 'EX', claimTtl, 'NX')) === 'OK';
    } catch (err) {
      // Without Redis the ingress cannot queue either; let it decide and tell the user.
      logger.warn({ platform, ...errorFields(err) }, 'delivery check failed; handing the message on');
      return true;
    }
  };

  return {
    async first(platform, messageId) {
      if (seenLocally(localId(platform, messageId))) return false;
      return claim(platform, messageId);
    },
    firstHere: (platform, messageId) => !seenLocally(localId(platform, messageId)),
    claim,
    async forget(platform, messageId) {
      local.delete(localId(platform, messageId));
      await forgetScript(redis, [keys.seen(platform, messageId)], []).catch(() => undefined);
    },
    async accepted(platform, messageId) {
      const state = await redis.get(keys.seen(platform, messageId));
      return state !== null && state !== SEEN.delivered;
    },
  };
}
