import type { Redis } from 'ioredis';
import { luaScript } from './lua-script.js';
import { queueKeys, type QueueKeys } from './keys.js';
import type { ChatMessage, MessageProgress } from './types.js';
import { recordIdsStartingWith } from './record-ids.js';
import { acquireResult, startMark, toHead, type AcquireReply } from './mailbox-heads.js';
import { payloadOf, pushResult, type LuaCall, type PushResult } from './push-record.js';
import { redisNowMs } from './redis-clock.js';

export { ownedUntil } from './mailbox-heads.js';

/**
 * Per-conversation mailboxes that keep messages in arrival order.
 *
 * Ingress pushes each new message onto its conversation's list, once: push marks the message
 * `queued` in the ingress's seen ledger (src/ingress/seen-ledger.ts), and a redelivery is a
 * duplicate (an adapter's `delivered` claim is not). A job that finds the conversation free takes its lease and drains the
 * list head first. A message pushed while a job holds the lease needs no job of its own (push
 * says so): the holder reaches it in order. A job of the same conversation that does arrive
 * meanwhile (queued before the lease was taken, or by the sweep) finishes at once. The holder
 * releases the lease only when the list is empty, in the same script that pops, so a
 * message pushed at any moment is either drained by the holder or finds the lease free.
 *
 * Every write a worker makes is fenced by its BullMQ lock token (scripts/*.lua): a worker
 * paused past its lock, whose job another worker took over, is refused by Redis itself.
 */

const scripts = {
  push: luaScript('push-7.lua'),
  acquire: luaScript('acquire-6.lua'),
  advance: luaScript('advance-9.lua'),
  record: luaScript('record-6.lua'),
  retakeLock: luaScript('retake-lock-3.lua'),
  takeOver: luaScript('take-over-1.lua'),
  checkStranded: luaScript('check-stranded-4.lua'),
  dropConversation: luaScript('drop-conversation-4.lua'),
  withdraw: luaScript('withdraw-1.lua'),
};

const DAY = 86_400;

export interface MailboxOptions {
  redis: Redis;
  /** Key prefix, e.g. `agent-bridge:chat` (BullMQ's prefix + queue name). */
  prefix: string;
  /** How long a queued message ID counts as seen (redeliveries within it are duplicates). */
  seenTtlSeconds?: number;
  /** Upper bound on how long an undelivered message is kept. */
  messageTtlSeconds?: number;
  /** How long a thread counts as answered by the bot (follow-ups need no mention). */
  answeredTtlSeconds?: number;
}

/**
 * What became of a deleted message (Mailbox.withdraw). `kept`: not stored yet (its deletion came
 * first): the push that stores it withdraws it (ChatQueue.withdraw, early-change.ts).
 */
export type WithdrawResult = 'withdrawn' | 'withdrawn_during_call' | 'answered' | 'absent' | 'kept';

/**
 * Which job is writing, for fencing: the job's ID and the token of its BullMQ lock. An empty
 * token writes unfenced (tools and tests that run no BullMQ worker).
 */
export interface Fence {
  jobId: string;
  token: string;
  /** Each fenced record also renews the lock for this long, as BullMQ's extendLock does. */
  lockDurationMs?: number;
  /** True once this worker gave its jobs back (shutdown timed out): it starts no new step. */
  abandoned?: () => boolean;
}

export interface MailboxHead {
  messageId: string;
  /** Null when the stored message expired or was lost; the worker skips it. */
  message: ChatMessage | null;
  progress: MessageProgress;
  /**
   * Set when the read that returned this head (`startCall`) also marked its call started and
   * renewed the job's lock: until this `performance.now()` the agent may be called with no
   * fenced write of its own. Half the renewed lock is kept as margin.
   */
  callFencedUntil?: number;
  /** The conversation's unfinished messages when the head was read, the head included. */
  queued?: number;
}

/** `startCall`: mark a head that has no reply yet as started, renewing the lock (see acquire). */
export interface ReadOptions {
  startCall?: boolean;
}

/** `turnOver`: the job's turn is over; advance says whether another job waits for it (`yieldTurn`). */
export interface AdvanceOptions extends ReadOptions {
  turnOver?: boolean;
  /**
   * The worker is shutting down: the next head, if any, is only read, never started, and
   * `yieldTurn` is set so the job goes back in line for another worker.
   */
  handBack?: boolean;
}

export type AcquireResult =
  | { status: 'ok'; head?: MailboxHead }
  | { status: 'held'; holder: string }
  /** The job's lock is another worker's now: this one must stop. */
  | { status: 'lost' };

/** Progress fields a worker records (field names as stored after `<messageId>:`). */
/** `chunks`: the reply as rendered when it was recorded (JSON array), see Mailbox.recordedChunks. */
export type ProgressFields = Partial<Record<'reply' | 'posted' | 'attempts' | 'limited' | 'started' | 'posting' | 'agentMessageId' | 'gaveUp' | 'chunks', string | number>>;

export class Mailbox {
  readonly keys: QueueKeys;
  private readonly redis: Redis;
  private readonly seenTtl: number;
  private readonly messageTtl: number;
  private readonly answeredTtl: number;

  constructor(options: MailboxOptions) {
    this.redis = options.redis;
    this.keys = queueKeys(options.prefix);
    this.seenTtl = options.seenTtlSeconds ?? DAY;
    this.messageTtl = options.messageTtlSeconds ?? 7 * DAY;
    this.answeredTtl = options.answeredTtlSeconds ?? 30 * DAY;
  }

  /**
   * Adds a message to its conversation, unless it was queued before or its channel already has
   * `maxPending` unfinished messages (0 = no cap). `pending` counts this one. When no job holds
   * the conversation, its lease is reserved for `jobId`, the job the caller queues next
   * (`held: false`): messages pushed before that job runs are then `held` and need no job.
   */
  async push(message: ChatMessage, maxPending = 0, jobId = ''): Promise<PushResult> {
    return this.pushWith(this.pushCall(message, maxPending, jobId));
  }

  /** {@link push} with its keys and arguments made already ({@link pushCall}). */
  async pushWith(call: LuaCall): Promise<PushResult> {
    return pushResult(await scripts.push(this.redis, call.keys, call.args));
  }

  /** push-7.lua's keys and arguments for {@link push} (push-add.ts runs it beside BullMQ's add). */
  pushCall(message: ChatMessage, maxPending: number, jobId: string): LuaCall {
    const k = this.keys;
    return {
      keys: [
        k.seen(message.platform, message.messageId),
        k.mailbox(message.conversationId),
        k.messages(message.conversationId),
        k.backlogOf(message),
        k.stranded,
        k.lease(message.conversationId),
        k.earlyChange(message.conversationId, message.messageId),
      ],
      args: [message.messageId, payloadOf(message), this.seenTtl, this.messageTtl, 0, maxPending, message.conversationId, jobId],
    };
  }

  /**
   * Takes (or keeps) the conversation's lease for the fenced job and returns the head message.
   *
   * With `startCall`, the same round trip marks the head's call started and renews the job's
   * lock (`callFencedUntil` on the head). That is as safe as a fenced write right before the
   * call: BullMQ gives a job to another worker only once its lock has lapsed, and the renewed
   * lock cannot lapse before `lockDurationMs` after this read was sent. Under at-most-once a
   * mark this early would turn a crash before the call into "answer lost", so that guarantee
   * does not use it (see MessageProcessor.startsCallOnRead).
   */
  async acquire(conversationId: string, fence: Fence, options: ReadOptions = {}): Promise<AcquireResult> {
    const k = this.keys;
    const start = this.callStart(fence, options);
    const r = (await scripts.acquire(
      this.redis,
      [k.mailbox(conversationId), k.lease(conversationId), k.messages(conversationId), k.jobLock(fence.jobId), k.stranded, k.stalled],
      [fence.jobId, this.messageTtl, fence.token, conversationId, start.lockMs],
    )) as AcquireReply;
    return acquireResult(r, start);
  }

  /**
   * The arguments a worker's fetch that also acquires (fetch-acquire.ts) appends to BullMQ's,
   * in scripts/fetch-acquire.lua's order: `lockMs` as in acquire's `startCall` (0 = only read),
   * and each key of the fetched job's conversation as the text before and after its ID.
   */
  fetchAcquireArgs(lockMs: number): Array<string | number> {
    const k = this.keys;
    const around = (key: (id: string) => string) => key(ID_MARK).split(ID_MARK);
    return [this.messageTtl, lockMs, ...around(k.mailbox), ...around(k.lease), ...around(k.messages), ...around(k.jobLock), k.stranded, k.stalled];
  }

  /**
   * What acquire would have returned, from the reply a fetch brought back (fetch-acquire.ts):
   * `lockMs` as passed to {@link fetchAcquireArgs}, `sentAt` the `performance.now()` at which
   * the fetch was sent (the lock it renewed cannot lapse before `sentAt + lockMs`).
   */
  fetchedAcquire(reply: unknown, lockMs: number, sentAt: number): AcquireResult {
    return acquireResult(reply as AcquireReply, startMark(lockMs, sentAt));
  }

  /** The lock duration a read passes to start the call (0: it only reads), and how it marks the head. */
  private callStart(fence: Fence, options: ReadOptions) {
    const lockMs = options.startCall && fence.token && fence.lockDurationMs ? fence.lockDurationMs : 0;
    return startMark(lockMs, performance.now());
  }

  /**
   * Forgets the unanswered messages of the conversations whose IDs start with `idPrefix` (a
   * workspace that uninstalled the app): those named (with the IDs of their jobs the caller
   * removed before they ran), and those waiting for the stranded sweep, which would otherwise
   * queue them again. A conversation a job holds keeps the message that job works on; the
   * ones behind it go. Resolves with how many messages were forgotten; `forgotten` hears which (each an end the metrics count).
   */
  async dropConversations(idPrefix: string, removedJobs: ReadonlyMap<string, readonly string[]>, forgotten?: (conversationId: string, ids: string[]) => void): Promise<number> {
    const k = this.keys;
    const stranded = (await this.redis.zrange(k.stranded, '0', '-1')).filter((id) => id.startsWith(idPrefix));
    let dropped = 0;
    for (const id of new Set([...removedJobs.keys(), ...stranded])) {
      if (!id.startsWith(idPrefix)) continue;
      const keys = [k.mailbox(id), k.lease(id), k.messages(id), k.stranded];
      const ids = (await scripts.dropConversation(this.redis, keys, [id, ...(removedJobs.get(id) ?? [])])) as string[];
      dropped += ids.length;
      if (ids.length > 0) forgotten?.(id, ids);
    }
    return dropped;
  }

  /**
   * Its sender deleted the message: unless its answer is recorded, it is marked given up with
   * `mark` (scripts/withdraw-1.lua), so no worker calls the agent for it or posts for it.
   */
  async withdraw(conversationId: string, messageId: string, mark: string): Promise<WithdrawResult> {
    const r = Number(await scripts.withdraw(this.redis, [this.keys.messages(conversationId)], [messageId, mark]));
    return r === 2 ? 'withdrawn' : r === 3 ? 'withdrawn_during_call' : r === 1 ? 'answered' : 'absent';
  }

  /** The IDs of the conversation's unfinished messages that start with `prefix` (a scan: for a deletion, not the message path). */
  idsStartingWith(conversationId: string, prefix: string): Promise<string[]> {
    return recordIdsStartingWith(this.redis, this.keys.messages(conversationId), prefix);
  }

  /** Moves the lease from a holder that is gone (its job finished or failed) to `holder`. */
  async takeOver(conversationId: string, from: string, holder: string): Promise<boolean> {
    return (await scripts.takeOver(this.redis, [this.keys.lease(conversationId)], [from, holder, this.messageTtl])) === 1;
  }

  /**
   * Finishes the head message and returns the next one with its channel's backlog (unfinished
   * messages), or undefined after releasing the lease on an empty mailbox; 'lost' (nothing
   * written) when the fenced job's lock is not its own. `startCall` as in acquire. With
   * `turnOver`, `yieldTurn` says whether a job waits in line (then the next head is not started);
   * with `handBack`, it is set whenever a next head waits.
   */
  async advance(
    conversationId: string,
    fence: Fence,
    done: Pick<MailboxHead, 'messageId' | 'message'>,
    options: AdvanceOptions = {},
  ): Promise<(MailboxHead & { channelBacklog: number; yieldTurn: boolean }) | undefined | 'lost'> {
    const k = this.keys;
    const start = this.callStart(fence, options);
    // A message whose record was lost has no known channel; its backlog entry ages out.
    const pending = done.message ? k.backlogOf(done.message) : `${k.base}:chan:unknown`;
    const r = (await scripts.advance(
      this.redis,
      [k.mailbox(conversationId), k.lease(conversationId), k.messages(conversationId), k.jobLock(fence.jobId), pending, k.stranded, k.stalled, k.wait, k.prioritized],
      [fence.jobId, done.messageId, this.messageTtl, fence.token, conversationId, start.lockMs, options.handBack ? '2' : options.turnOver ? '1' : '0'],
    )) as [string, string?, Array<string | null>?, number?, number?, number?];
    if (r[0] === 'lost') return 'lost';
    if (r[0] !== 'ok') return undefined;
    const next = Object.assign(toHead(r[1]!, r[2] ?? [], r[5]), { channelBacklog: r[3] ?? 0, yieldTurn: r[4] === 1 });
    // A head handed back in line is only read: its call starts in a later turn.
    return next.yieldTurn ? next : start.mark(next);
  }

  /**
   * Records progress of a message in one fenced round trip; `answered` also marks the
   * conversation as one the bot answered in. False (nothing written) when the job's lock is
   * not the fence's any more or the message is already finished; `gone` (nothing written) when
   * Redis lost the message's record and its seen mark (it restarted without persistence):
   * nobody else has the message any more.
   */
  async record(conversationId: string, messageId: string, fence: Fence, fields: ProgressFields, options: { answered?: boolean } = {}): Promise<boolean | 'gone'> {
    const k = this.keys;
    // A worker past its shutdown deadline is about to exit: record what it did (chunks posted, a
    // billed answer, which the next worker posts instead of asking again), start nothing, and
    // neither renew its lock nor take a lapsed one back (the job is another worker's to take).
    const abandoned = fence.abandoned?.() ?? false;
    if (abandoned) fields = Object.fromEntries(Object.entries(fields).filter(([field]) => DONE_FIELDS.has(field)));
    const pairs = Object.entries(fields).flatMap(([field, value]) => [field, String(value ?? '')]);
    const r = await scripts.record(
      this.redis,
      [k.jobLock(fence.jobId), k.messages(conversationId), k.answered(conversationId), k.stalled, k.active, k.seen(platformOf(conversationId), messageId)],
      [fence.token, messageId, options.answered ? this.answeredTtl : 0, abandoned ? 0 : (fence.lockDurationMs ?? 0), fence.jobId, ...pairs],
    );
    if (r === -1) return fence.abandoned?.() ? false : 'gone';
    return r === 1 && !fence.abandoned?.();
  }

  /**
   * Takes back the fenced job's BullMQ lock when it lapsed unseen (Redis was away longer than the
   * lock) and the job is still active: BullMQ's own renewal cannot, having no lock to extend.
   * False when any lock is there or the job left the active list (scripts/retake-lock-3.lua).
   */
  async retakeLock(fence: Fence, lockMs: number): Promise<boolean> {
    const k = this.keys;
    return (await scripts.retakeLock(this.redis, [k.jobLock(fence.jobId), k.stalled, k.active], [fence.token, lockMs, fence.jobId])) === 1;
  }

  /**
   * How many messages accepted under a binding channel are unfinished (waiting, or being
   * answered); entries older than a message's lifetime belong to messages that expired.
   */
  async unfinishedIn(platform: ChatMessage['platform'], channelId: string): Promise<number> {
    return this.redis.zcount(this.keys.channelPending(platform, channelId), (await redisNowMs(this.redis)) - this.messageTtl * 1000, '+inf');
  }


  /**
   * The chunks a reply was rendered into when its answer was recorded (stored only for a reply
   * of several): a worker that resumes it posts the rest of those, not of its own rendering,
   * which a later release (or other settings) may split elsewhere. Undefined when none is stored.
   */
  async recordedChunks(conversationId: string, messageId: string): Promise<string[] | undefined> {
    const raw = await this.redis.hget(this.keys.messages(conversationId), `${messageId}:chunks`);
    if (!raw) return undefined;
    try {
      const chunks: unknown = JSON.parse(raw);
      return Array.isArray(chunks) && chunks.length > 0 && chunks.every((c) => typeof c === 'string') ? chunks : undefined;
    } catch {
      return undefined;
    }
  }

  /** Whether the bot already answered in this conversation (a thread). */
  async isAnswered(conversationId: string): Promise<boolean> {
    return (await this.redis.exists(this.keys.answered(conversationId))) === 1;
  }

  /**
   * Conversations whose messages no job took for `olderThanMs` (at most `limit`, oldest
   * first): normally a job is on its way or a holder drains them, but after a crash between
   * accepting a message and queueing its job nothing would ever come, and a holder that ended
   * without releasing its lease (it failed for good and its wake-up was lost) drains nothing.
   * `holder` is set when a job holds the conversation: the caller checks that job still lives.
   * Each one returned is looked at again only `olderThanMs` later.
   */
  async stranded(olderThanMs: number, limit: number): Promise<Array<MailboxHead & { conversationId: string; holder?: string }>> {
    const k = this.keys;
    const candidates = await this.redis.zrangebyscore(k.stranded, '-inf', (await redisNowMs(this.redis)) - olderThanMs, 'LIMIT', 0, limit);
    const found: Array<MailboxHead & { conversationId: string; holder?: string }> = [];
    for (const conversationId of candidates) {
      const r = (await scripts.checkStranded(
        this.redis,
        [k.mailbox(conversationId), k.lease(conversationId), k.messages(conversationId), k.stranded],
        [conversationId],
      )) as [string, string?, string?, string?];
      if (r[0] === 'stranded') found.push({ conversationId, ...toHead(r[1]!, [r[2] ?? null]) });
      if (r[0] === 'held') found.push({ conversationId, holder: r[3]!, ...toHead(r[1]!, [r[2] ?? null]) });
    }
    return found;
  }
}

/** Progress fields that record what was done, never a step about to start: kept by an abandoned worker. */
const DONE_FIELDS: ReadonlySet<string> = new Set(['posted', 'reply', 'agentMessageId', 'chunks']);

/** The platform a conversation ID starts with (core/conversation.ts encodes it first). */
function platformOf(conversationId: string): string {
  const colon = conversationId.indexOf(':');
  return colon < 0 ? conversationId : conversationId.slice(0, colon);
}

/** Stands for the conversation or job ID when a key is split around it (fetchAcquireArgs). */
const ID_MARK = '\u0000';
