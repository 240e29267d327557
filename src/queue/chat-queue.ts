import { Queue, type ConnectionOptions } from 'bullmq';
import type { QueueCounts } from '../core/platform-context.js';
import type { Redis } from 'ioredis';
import type { MessageEnds } from '../diagnostics/message-ends.js';
import { Mailbox, type WithdrawResult } from './mailbox.js';
import { editStoredMessage, storedMessage, type EditResult } from './edit-message.js';
import { redisNowMs } from './redis-clock.js';
import { keepEarlyChange, type ChangeTiming, type EarlyChange, type EarlyChangeResult } from './early-change.js';
import { decodeConversationId } from '../core/conversation.js';
import { luaScript } from './lua-script.js';
import { PushAdd, pushAddLua } from './push-add.js';
import { DELETED_WHY, QUEUE_NAME, jobIdFor, type ChatJobData, type ChatMessage, type GaveUp } from './types.js';

export interface ChatQueueOptions {
  /** Connection for BullMQ's Queue (not blocking). */
  connection: ConnectionOptions;
  /** Connection for the mailbox scripts. */
  redis: Redis;
  /** BullMQ key prefix (a `{hash tag}` in Redis Cluster). */
  prefix: string;
  keepCompleted: { age: number; count: number };
  keepFailed: { age: number; count: number };
  /** Unfinished messages a channel may have; beyond it a message is refused as busy (0 = no cap). */
  maxPendingPerChannel?: number;
  /**
   * Days a conversation the bot answered keeps its "answered" mark (follow-ups in a thread need
   * no mention meanwhile). One small key per answered thread: at scale, most of Redis's memory.
   */
  threadFollowUpDays?: number;
  /** AGENT_CALL_GUARANTEE=at-most-once: an edit of a head a job holds is too late (edit-message.ts). */
  atMostOnce?: boolean;
  /** Where the messages forgotten on an uninstall are counted and logged (they never reach a worker). */
  ends?: Pick<MessageEnds, 'withdrawn'>;
}

/**
 * The name of every job: it wakes a conversation, whose mailbox then says which message is
 * next. (Jobs queued before the name changed were called `chat`; the worker takes any name.)
 */
export const WAKE_CONVERSATION = 'wake-conversation';

/**
 * The backoff of a job whose processing threw (not an agent error: those have their own
 * policy): 1, 2, 4 s, then every 5 s. BullMQ's plain exponential backoff would leave a
 * conversation that hit a few Redis errors around an outage waiting 30 s and more after
 * Redis is back. The worker implements it (`retryAfterThrowMs`).
 */
export const RETRY_AFTER_THROW = 'bounded';

/** Milliseconds before the next try of a job that threw for the `attemptsMade`-th time. */
export function retryAfterThrowMs(attemptsMade: number): number {
  return Math.min(1000 * 2 ** Math.max(0, attemptsMade - 1), 5000);
}

/**
 * Whether a message the ingress stopped waiting for is stored (`stored`), or now never will be:
 * refused by this caller (`refused`, its notice to post) or by another (`refused-elsewhere`).
 */
export type Unstored = 'stored' | 'refused' | 'refused-elsewhere';

const refuseUnstoredScript = luaScript('refuse-unstored-1.lua');
/** As long as a push counts as a redelivery (the mailbox's seen TTL). */
const REFUSED_TTL_SECONDS = 86_400;

/**
 * What became of an accepted message. `behindRetry`: it waits behind a message of its
 * conversation that is waiting out a retry (worth explaining in `/agent why`).
 */
export type EnqueueResult = { status: 'queued' | 'duplicate'; jobId: string; behindRetry?: boolean } | { status: 'busy'; pending: number };

/** The producer side: accepts a message into its conversation's mailbox and queues its job. */
export class ChatQueue {
  readonly queue: Queue<ChatJobData>;
  readonly mailbox: Mailbox;
  /** The push and its job's add in one round trip (push-add.ts). */
  readonly pushAdd: PushAdd;

  constructor(private readonly options: ChatQueueOptions) {
    this.mailbox = new Mailbox({
      redis: options.redis,
      prefix: `${options.prefix}:${QUEUE_NAME}`,
      ...(options.threadFollowUpDays ? { answeredTtlSeconds: options.threadFollowUpDays * 86_400 } : {}),
    });
    this.pushAdd = new PushAdd(this.mailbox);
    this.queue = new Queue<ChatJobData>(QUEUE_NAME, {
      connection: options.connection,
      prefix: options.prefix,
      defaultJobOptions: {
        // Our own per-message attempts decide give-up; these only cover unexpected throws
        // (a Redis outage mid-job), which must never drop a conversation, and must not leave
        // it waiting long once Redis is back: see RETRY_AFTER_THROW.
        attempts: 50,
        backoff: { type: RETRY_AFTER_THROW },
        removeOnComplete: options.keepCompleted,
        removeOnFail: options.keepFailed,
      },
    }, this.pushAdd.backendFactory);
  }

  /**
   * Accepts a message. When a job holds its conversation, or is queued to hold it, that job
   * answers it in turn and no job is queued (most messages of a busy conversation: a queue
   * add, a fetch, a lease check and a completion saved each). Otherwise the push reserves the
   * conversation for this message's job, which the same round trip queues after it
   * (push-add.ts). A message seen before is not pushed again, but its job is re-added (a no-op
   * while it exists), which heals a job lost to a crash; so does the mailbox sweep, within
   * seconds, when nothing is redelivered.
   *
   * Fairness: a job's priority is its channel's backlog when it arrives (lower runs first), so
   * a quiet channel's question runs next while a busy channel's 1,000 jobs wait their turn.
   * A channel with nothing else waiting gets a plain job (no priority): BullMQ runs those
   * before any prioritized one, which is the same order, on its cheaper path.
   * Order inside a conversation never depends on it: the mailbox drains oldest first.
   */
  async enqueue(message: ChatMessage): Promise<EnqueueResult> {
    const jobId = jobIdFor(message.platform, message.messageId);
    const call = this.mailbox.pushCall(message, this.options.maxPendingPerChannel ?? 0, jobId);
    // The job, if any, is added in the push's own round trip (push-add.ts), after the push.
    const pushed = await this.pushAdd.push(call, jobId, (priority) => this.wake(message, message.messageId, { jobId, priority }));
    if (pushed.status === 'busy') return pushed;
    if (pushed.held) return { status: pushed.status, jobId, behindRetry: pushed.status === 'queued' && pushed.behindRetry };
    return { status: pushed.status, jobId };
  }

  /**
   * After a push of this message went unanswered (Redis stalled or away): whether the message
   * is stored, and if not, marks it refused so that a push of it still on its way stores nothing
   * when Redis resumes (scripts/refuse-unstored-1.lua). `mark` is the caller's own
   * (`refused:<unique token>`): asking again with it after a lost answer still says `refused`.
   * It runs on the push's connection, so Redis runs it after every push sent before it (not so
   * when BullMQ's scripts could not be fused: the answer is still final, only less often `stored`).
   */
  async refuseUnstored(platform: ChatMessage['platform'], messageId: string, mark: string): Promise<Unstored> {
    const client = pushAddLua() ? ((await this.queue.backend.client) as unknown as Redis) : this.options.redis;
    const reply = await refuseUnstoredScript(client, [this.mailbox.keys.seen(platform, messageId)], [mark, REFUSED_TTL_SECONDS]);
    return reply === 1 ? 'refused' : reply === 0 ? 'refused-elsewhere' : 'stored';
  }

  /**
   * Queues a job that wakes a message's conversation (the message's own job, or a fresh one
   * after a job failed for good). `priority` 0 (the default, a plain job) runs before every backlog.
   */
  async wake(
    message: Pick<ChatMessage, 'platform' | 'conversationId' | 'instanceId' | 'channelId' | 'userId'>,
    messageId: string,
    options: { jobId: string; priority?: number },
  ): Promise<void> {
    await this.queue.add(
      WAKE_CONVERSATION,
      {
        platform: message.platform,
        conversationId: message.conversationId,
        messageId,
        instanceId: message.instanceId,
        channelId: message.channelId,
        userId: message.userId,
      },
      { jobId: options.jobId, ...(options.priority ? { priority: options.priority } : {}) },
    );
  }

  /**
   * Forgets one workspace's work not started yet (it uninstalled the app): its waiting and
   * delayed jobs, and their messages, which the stranded sweep would otherwise queue again (and
   * bill). A job a worker runs meanwhile keeps the one message it works on (it finishes, or
   * finds no installation and gives up); the messages queued behind it in its conversation go.
   * A rare, whole-list scan. Resolves with how many messages went (not jobs: a message queued
   * behind a running one has no job of its own), each counted as `withdrawn` (`ends`).
   */
  async dropWorkspace(platform: ChatMessage['platform'], workspaceId: string): Promise<number> {
    const prefix = `${encodeURIComponent(platform)}:${encodeURIComponent(workspaceId)}:`;
    const jobs = await this.queue.getJobs(['waiting', 'delayed', 'prioritized']);
    const removedJobs = new Map<string, string[]>();
    for (const job of jobs) {
      if (!job?.id || !job.data.conversationId.startsWith(prefix)) continue;
      if (await job.remove().then(() => true, () => false)) {
        const ids = removedJobs.get(job.data.conversationId) ?? [];
        ids.push(job.id);
        removedJobs.set(job.data.conversationId, ids);
      }
    }
    // A conversation with messages queued behind a running job is in the stranded set (every push lists it).
    return this.mailbox.dropConversations(prefix, removedJobs, (conversationId, ids) =>
      this.options.ends?.withdrawn(platform, conversationId, ids, 'its workspace removed the app (uninstalled, or the bot left the server)'),
    );
  }

  /**
   * Its sender deleted a message before it was answered: the agent is not called for it, and
   * nothing is posted for it (see Mailbox.withdraw; an answer already recorded is still posted).
   * With `timing`, a message not stored yet and sent a moment ago (its deletion came first) is
   * withdrawn by the push that stores it: `kept` (early-change.ts).
   */
  async withdraw(conversationId: string, messageId: string, ref: string, timing?: ChangeTiming): Promise<WithdrawResult> {
    const mark = JSON.stringify({ ref, withdrawn: true, why: DELETED_WHY } satisfies GaveUp);
    const outcome = await this.mailbox.withdraw(conversationId, messageId, mark);
    if (outcome !== 'absent' || !timing) return outcome;
    const early = await this.keepEarly(conversationId, messageId, { kind: 'delete' }, timing, ref);
    // Stored between the two steps: withdrawn as any stored message is.
    if (early === 'stored') return this.mailbox.withdraw(conversationId, messageId, mark);
    return early === 'kept' || early === 'superseded' ? 'kept' : 'absent';
  }

  /**
   * Keeps its sender's edit or deletion of a message not stored yet (sent a moment ago, its own
   * event still to come) for the push that stores it to apply. See early-change.ts.
   */
  keepEarly(conversationId: string, messageId: string, change: EarlyChange, timing: ChangeTiming, ref: string): Promise<EarlyChangeResult> {
    const at = { platform: decodeConversationId(conversationId).platform, conversationId, messageId };
    return keepEarlyChange(this.options.redis, this.mailbox.keys, at, change, timing, ref);
  }

  /** Redis's clock (ms): the one time every process of a deployment shares (redis-clock.ts). */
  redisNow(): Promise<number> {
    return redisNowMs(this.options.redis);
  }

  /** The IDs of a conversation's unfinished messages that start with `prefix` (e.g. the asks about a deleted message). */
  idsStartingWith(conversationId: string, prefix: string): Promise<string[]> {
    return this.mailbox.idsStartingWith(conversationId, prefix);
  }

  /**
   * Its sender edited a message: while its agent call has not started, the call sends `text`, or
   * nothing at all when `text` is undefined (the edit no longer asks the bot); an edit older than
   * one applied (by `order`, when known) changes nothing. See edit-message.ts.
   */
  edit(conversationId: string, messageId: string, text: string | undefined, ref: string, order?: string): Promise<EditResult> {
    return editStoredMessage(this.options.redis, this.mailbox.keys, conversationId, messageId, text, ref, this.options.atMostOnce, order);
  }

  /** A message as stored while it waits (or is being answered); undefined once finished or never stored. */
  stored(conversationId: string, messageId: string): Promise<ChatMessage | undefined> {
    return storedMessage(this.options.redis, this.mailbox.keys, conversationId, messageId);
  }

  /** Messages of a binding channel not finished yet: each keeps the instance it was accepted under. */
  unfinishedIn(platform: ChatMessage['platform'], channelId: string): Promise<number> {
    return this.mailbox.unfinishedIn(platform, channelId);
  }

  /** Whether the bot answered in this conversation (a thread's follow-ups need no mention then). */
  isAnswered(conversationId: string): Promise<boolean> {
    return this.mailbox.isAnswered(conversationId);
  }

  /**
   * Posts a refusal notice of this kind to a user at most once per `windowSeconds`: true when
   * this call may post it (the first since the window opened).
   */
  async firstNotice(kind: string, platform: ChatMessage['platform'], userId: string, windowSeconds: number): Promise<boolean> {
    const set = await this.options.redis.set(this.mailbox.keys.noticeSent(kind, platform, userId), '1', 'EX', Math.max(1, Math.ceil(windowSeconds)), 'NX');
    return set === 'OK';
  }

  /** Counts one more `kind` event for `id` in a window opened by the first; returns the count so far. */
  async countInWindow(kind: string, platform: ChatMessage['platform'], id: string, windowSeconds: number): Promise<number> {
    const key = this.mailbox.keys.noticeSent(`count-${kind}`, platform, id);
    const replies = await this.options.redis.multi().incr(key).expire(key, Math.max(1, Math.ceil(windowSeconds)), 'NX').exec();
    const [err, count] = replies?.[0] ?? [new Error('the count was not run')];
    if (err) throw err;
    return Number(count);
  }

  async counts(): Promise<QueueCounts> {
    const c = await this.queue.getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed', 'prioritized');
    return {
      waiting: (c.waiting ?? 0) + (c.prioritized ?? 0),
      active: c.active ?? 0,
      completed: c.completed ?? 0,
      failed: c.failed ?? 0,
      delayed: c.delayed ?? 0,
    };
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}
