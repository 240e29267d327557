import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Platform } from '../core/conversation.js';
import { errorFields, type Logger } from '../logger.js';
import { queueKeys } from '../queue/keys.js';
import { luaScript } from '../queue/lua-script.js';

/**
 * How far a platform message got, the value of its one key `seen:<platform>:<messageId>`
 * (src/queue/keys.ts). `delivered`: an adapter took its first delivery (Slack's `app_mention`
 * and `message` of one message, a redelivery after a late ack, a double submit in the
 * playground are the later ones), or handled it on the record. `claiming:<token>`: one delivery
 * holds a short lease on it while it works (see SeenLedger.lease). `queued`: the mailbox
 * accepted it (scripts/push-7.lua sets it in the same script that stores the message); from
 * then on a push is a duplicate. `refused:<token>` is the ingress's: it gave up on the message
 * while Redis was away and told the user (ChatQueue.refuseUnstored); a push is a duplicate then
 * too, and stores nothing.
 */
export const SEEN = { delivered: 'delivered', queued: 'queued', claiming: 'claiming:' } as const;

/**
 * One delivery's lease on a message (SeenLedger.lease): renewed while held, so it lapses within
 * seconds only when its holder is gone.
 */
export interface SeenLease {
  /** Handled on the record (dropped, a notice posted): the lease becomes `delivered` for the claim TTL. */
  settle(): Promise<void>;
  /** Not handed on: the lease is released, so a redelivery is handled again. */
  release(): Promise<void>;
  /** Stored (the push replaced the lease with `queued`) or lost to another delivery: stops renewing it. */
  stop(): void;
}

/** What a delivery found when it asked for a lease. */
export type LeaseResult =
  | { kind: 'taken'; lease: SeenLease }
  /** Another delivery holds a live lease: this one should come again later (Slack: no ack). */
  | { kind: 'busy' }
  /** Stored or handled on the record before: a repeat. */
  | { kind: 'handled' };

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
  /**
   * A claim that outlives its holder by seconds, not an hour: a short lease (`claiming:<token>`,
   * `leaseMs`), renewed while its holder works and turned into the lasting mark once the message
   * is stored (the push's `queued`, or SeenLease.settle's `delivered`). A delivery killed in
   * between leaves a lease that lapses, and the redelivery takes it. `busy` while another
   * delivery's lease is live (and this process forgets it saw the message, so that redelivery
   * is handled here too). When Redis cannot say: taken (`firstHere`, asked first, is what this
   * process remembers).
   */
  lease(platform: Platform, messageId: string): Promise<LeaseResult>;
  /** Releases a claim whose message could not be handed on, so a redelivery is handled again. A queued message stays seen. */
  forget(platform: Platform, messageId: string): Promise<void>;
  /** Whether the mailbox accepted this message (a redelivery, not to be charged again); the `1` of earlier versions counts. */
  accepted(platform: Platform, messageId: string): Promise<boolean>;
}

/** The part of the ledger an adapter uses (through its `AdapterContext`). */
export type FirstDelivery = Pick<SeenLedger, 'first' | 'firstHere' | 'lease' | 'forget'>;

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
  /**
   * How long a lease lasts unless renewed (it is renewed every third of it while held).
   * @defaultValue 5000
   */
  leaseMs?: number;
}

const forgetScript = luaScript('forget-seen-1.lua');
const leaseScript = luaScript('lease-seen-1.lua');
const replaceScript = luaScript('replace-seen-1.lua');
const releaseScript = luaScript('release-lock-1.lua');

/** How long, and how many, first deliveries a process remembers for itself while Redis is away. */
const LOCAL_MS = 5 * 60_000;
const LOCAL_MAX = 10_000;

export function createSeenLedger(options: SeenLedgerOptions): SeenLedger {
  const { redis, logger } = options;
  const keys = queueKeys(options.prefix);
  const claimTtl = options.claimTtlSeconds ?? 3_600;
  const leaseMs = options.leaseMs ?? 5_000;
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

  /** A lease this delivery holds: renewed every third of its length until settled, released or stopped. */
  const heldLease = (platform: Platform, messageId: string, value: string): SeenLease => {
    const key = keys.seen(platform, messageId);
    let held = true;
    const renew = setInterval(() => {
      void replaceScript(redis, [key], [value, value, leaseMs]).then(
        (r) => {
          // Lapsed and taken over, or replaced by the push: nothing left to renew.
          if (r === 0) stop();
        },
        () => undefined,
      );
    }, Math.max(100, Math.floor(leaseMs / 3)));
    renew.unref();
    const stop = () => {
      held = false;
      clearInterval(renew);
    };
    return {
      async settle() {
        if (!held) return;
        stop();
        await replaceScript(redis, [key], [value, SEEN.delivered, claimTtl * 1000]).catch(() => undefined);
      },
      async release() {
        stop();
        local.delete(localId(platform, messageId));
        await releaseScript(redis, [key], [value]).catch(() => undefined);
      },
      stop,
    };
  };
  /** A lease Redis could not give: only this process's memory stands for it. */
  const offline = (platform: Platform, messageId: string): SeenLease => ({
    settle: async () => undefined,
    release: async () => void local.delete(localId(platform, messageId)),
    stop: () => undefined,
  });

  return {
    async lease(platform, messageId) {
      const value = `${SEEN.claiming}${randomUUID()}`;
      try {
        const r = await leaseScript(redis, [keys.seen(platform, messageId)], [value, leaseMs]);
        if (r === 1) return { kind: 'taken', lease: heldLease(platform, messageId, value) };
        if (r === 0) {
          // Its holder may die: a redelivery to this process must not read as a repeat.
          local.delete(localId(platform, messageId));
          return { kind: 'busy' };
        }
        return { kind: 'handled' };
      } catch (err) {
        logger.warn({ platform, ...errorFields(err) }, 'delivery check failed; handing the message on');
        return { kind: 'taken', lease: offline(platform, messageId) };
      }
    },
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
      return state !== null && state !== SEEN.delivered && !state.startsWith(SEEN.claiming);
    },
  };
}
