import { DelayedError, Worker, type ConnectionOptions, type Job, type Queue } from 'bullmq';
import { errorFields } from '../logger.js';
import type { Logger } from '../logger.js';
import type { Fence, Mailbox } from '../queue/mailbox.js';
import { retryAfterThrowMs, type ChatQueue, WAKE_CONVERSATION } from '../queue/chat-queue.js';
import { addPriority, backlogPriority } from '../queue/priority.js';
import { QUEUE_NAME, jobIdFor, type ChatJobData } from '../queue/types.js';
import type { DropLog } from '../diagnostics/drop-log.js';
import { platformOfConversation, type MessageEnds } from '../diagnostics/message-ends.js';
import type { MessageProcessor } from './process-message.js';
import { patiently } from './message-scope.js';
import { FetchAcquire } from '../queue/fetch-acquire.js';
import { isRedisConnectionError, redisRefusalWords } from '../redis-errors.js';
import { oncePer } from '../core/once-per.js';
import { onRedisTime } from '../queue/redis-time-backend.js';
import { RedisTimeEstimate, redisTimeMsAt } from '../queue/redis-time-estimate.js';
import type { Redis } from 'ioredis';

export interface ChatWorkerOptions {
  /** A connection BullMQ may block on (`maxRetriesPerRequest: null`). */
  connection: ConnectionOptions;
  prefix: string;
  queue: Queue<ChatJobData>;
  /** Where wake jobs are added (the sweep, a job that failed for good). */
  chatQueue: Pick<ChatQueue, 'wake'>;
  mailbox: Mailbox;
  processor: MessageProcessor;
  logger: Logger;
  /** @defaultValue 50 */
  concurrency: number;
  /** How long a job's lock lasts without renewal; a killed worker's job is free after it. */
  lockDurationMs: number;
  /** How often BullMQ looks for jobs whose worker died. */
  stalledIntervalMs: number;
  /** Where a message stuck behind a retried one is noted for `/agent why`. */
  drops?: DropLog;
  /** How often stranded conversations are looked for. @defaultValue 5000 */
  sweepIntervalMs?: number;
  /** How long accepted messages wait untaken before the sweep wakes them. @defaultValue 10000 */
  strandedAfterMs?: number;
  /** Where a message whose record is gone is counted and logged (it ends without an answer or a notice). */
  ends?: Pick<MessageEnds, 'lost'>;
}

export interface ChatWorker {
  /** BullMQ's workers of this process: one per fetch loop ({@link fetchLoops}). */
  workers: ReadonlyArray<Worker<ChatJobData>>;
  /** Stops taking jobs, lets in-flight ones finish within `timeoutMs`, then closes. Idempotent. */
  close(timeoutMs: number): Promise<void>;
}

/** How long a job answers its conversation before it lets other channels' jobs go first. */
const TURN_MS = 250;

/** Slots of one fetch loop: a loop's first call waits for this many fetches at most. */
const SLOTS_PER_FETCH_LOOP = 250;
/** Fetch loops of one process at most (each has its own blocking Redis connection). */
const MAX_FETCH_LOOPS = 32;

/**
 * How `concurrency` slots are split between BullMQ workers in one process. BullMQ's worker
 * fetches jobs one round trip at a time and starts none until all its slots are filled or the
 * queue has no more (`Worker.mainLoop`: "we fetch jobs in sequence"), so with 5,000 slots and a
 * backlog waiting the first agent call opened 3.5-4.5 s after the worker began, and every call of
 * that first wave together. Several workers fetch side by side, each starting its calls after its
 * own share. At the default of 50 slots there is one.
 */
export function fetchLoops(concurrency: number): number[] {
  const loops = Math.min(MAX_FETCH_LOOPS, Math.ceil(concurrency / SLOTS_PER_FETCH_LOOP));
  const share = Math.floor(concurrency / loops);
  return Array.from({ length: loops }, (_, i) => share + (i < concurrency % loops ? 1 : 0));
}

/**
 * The job's priority as stored (an earlier turn may have changed it since the add, so not
 * `opts.priority`); BullMQ hands a fetched job's hash field over as a string.
 */
function storedPriority(job: Job): number {
  return Number(job.priority) || 0;
}

/** Result of one job, visible in the dashboard. */
type JobResult = { processed: number } | { behind: string } | { lost: true };

/**
 * Consumes chat jobs. A job holds its conversation (see mailbox.ts) and answers its messages
 * in order, one per turn in the queue; when another job holds the conversation, this one
 * finishes at once as "behind" it.
 */
export function startChatWorker(options: ChatWorkerOptions): ChatWorker {
  // BullMQ's fetch of a job also acquires its conversation, as the first acquire below would.
  const fetchAcquire = new FetchAcquire({
    mailbox: options.mailbox,
    lockMs: options.processor.startsCallOnRead ? options.lockDurationMs : 0,
    // A message that arrived while a job answered what it took for its last one: a new job takes it.
    // It goes in line as its channel's backlog ranks it (the push's rule, priority.ts): a busy
    // channel's conversation does not pass a quieter channel's messages by being handed on.
    handOff: async ({ data }, head, jobId, backlog) => {
      try {
        await options.chatQueue.wake({ ...data, channelId: data.channelId ?? '', userId: data.userId ?? '' }, head, { jobId, priority: addPriority(backlog) });
      } catch (err) {
        // Its lease and the stranded list say who should hold it: the sweep queues it.
        options.logger.warn({ conversationId: data.conversationId, ...errorFields(err) }, 'could not queue the next message of a conversation; the sweep will');
      }
    },
  });
  /** The lock token of each job this process runs: a lock that lapsed unseen is taken back with it (watch). */
  const tokens = new Map<string, string>();
  const processJob = async (job: Job<ChatJobData>, token?: string): Promise<JobResult> => {
    if (token) tokens.set(job.id!, token);
    try {
      const result = await answerJob(job, token);
      if (abandoned && 'lost' in result) {
        // The shutdown timed out and this job stopped short of finishing its message (its lock is
        // still this worker's): completing it would leave the message unanswered with no job to
        // take it. It goes back in line for the next worker, which resumes from its record.
        await job.moveToDelayed(Date.now(), token);
        throw new DelayedError();
      }
      return result;
    } finally {
      tokens.delete(job.id!);
    }
  };
  const answerJob = async (job: Job<ChatJobData>, token?: string): Promise<JobResult> => {
    const conversationId = job.data.conversationId;
    const holder = job.id!;
    // Every mailbox write below is fenced by this job's lock token (see mailbox.ts).
    const fence: Fence = { jobId: holder, token: token ?? '', lockDurationMs: options.lockDurationMs, abandoned: isAbandoned };
    // The read that returns a message also marks its call started, when the guarantee allows.
    const read = { startCall: options.processor.startsCallOnRead };
    let acquired = fetchAcquire.take(holder, token) ?? (await options.mailbox.acquire(conversationId, fence, read));
    if (acquired.status === 'lost') return { lost: true };
    if (acquired.status === 'held') {
      const from = acquired.holder;
      const state = await options.queue.getJobState(from);
      // A holder whose job ended without releasing (it failed for good) is replaced.
      if (state === 'completed' || state === 'failed' || state === 'unknown') {
        if (await options.mailbox.takeOver(conversationId, from, holder)) {
          options.logger.warn({ conversationId, from }, 'took over a conversation from a finished job');
          acquired = await options.mailbox.acquire(conversationId, fence, read);
          if (acquired.status === 'lost') return { lost: true };
        }
      }
      if (acquired.status === 'held') {
        // Waiting behind a message that is itself waiting (retry, rate limit) is worth explaining.
        if ((state === 'delayed' || state === 'waiting' || state === 'prioritized') && job.data.channelId && job.data.userId) {
          await options.drops?.record(job.data.platform, job.data.channelId, {
            messageId: job.data.messageId,
            userId: job.data.userId,
            reason: 'queued',
            at: Date.now(),
          });
        }
        return { behind: acquired.holder };
      }
    }

    if (draining && acquired.head?.message && acquired.head.progress.reply === undefined) {
      // Fetched as the shutdown began: no new billed call starts in a draining worker. The job
      // keeps its lease and goes back in line for the next worker. The read that fetched it
      // marked its call started: that mark is taken back, or the next worker's call would count
      // as its second, and one crash during it would end the message with "answer lost".
      const { head } = acquired;
      if (head.callFencedUntil !== undefined) {
        await patiently(() => options.mailbox.record(conversationId, head.messageId, fence, { started: head.progress.started || '' }));
      }
      await job.moveToDelayed(Date.now(), token);
      throw new DelayedError();
    }

    // Fairness: a job answers its conversation's messages for one turn, then goes back in line
    // if another job waits (see below). A fast agent drains a burst in one turn; a slow one
    // yields after each answer while others wait, and goes on while nobody does.
    const turnEnds = performance.now() + TURN_MS;
    let head = acquired.head;
    /** When the current head was read. */
    let headReadAt = performance.now();
    let processed = 0;
    while (head) {
      if (head.message) {
        const result = await options.processor.process({ ...head, message: head.message }, fence);
        if (result.outcome === 'lost') return { lost: true };
        if (result.outcome === 'retry') {
          const { decision } = result;
          if (decision.action === 'rate-limit') {
            // BullMQ 6 puts a rate-limited job with a priority back without waking any worker
            // (no marker), so it would sit unseen; as an unprioritized job it goes back to the
            // front of the wait list and is taken once the pause ends.
            if (storedPriority(job)) await job.changePriority({ priority: 0 });
            await options.queue.rateLimit(decision.delayMs);
            throw Worker.RateLimitError();
          }
          // The job keeps the conversation while it waits, so later messages stay behind it.
          await job.moveToDelayed(Date.now() + decision.delayMs, token);
          throw new DelayedError();
        }
      } else if (options.ends) {
        options.ends.lost(platformOfConversation(conversationId), conversationId, head.messageId, 'it expired unanswered, or Redis lost it');
      } else {
        options.logger.error({ conversationId, messageId: head.messageId }, 'message record missing; skipping it');
      }
      const done = head;
      if (done.message && done.queued === 1 && performance.now() - headReadAt < TURN_MS && !abandoned) {
        // It was alone in its mailbox and answered within a turn: the job's completion finishes
        // it (what advance does) in BullMQ's own round trip, and hands a message that came
        // meanwhile to a new job (fetch-acquire.ts). A quick answer seldom has one behind it, and
        // the round trip is a fair share of its cost; beside a slower answer the round trip is
        // nothing, a follow-up is likelier, and this job had better go on to it.
        fetchAcquire.finishWith(holder, {
          conversationId,
          messageId: done.messageId,
          pendingKey: options.mailbox.keys.backlogOf(done.message),
          data: job.data,
        });
        return { processed: processed + 1 };
      }
      // Fenced: a worker that lost its lock does not take the next message.
      const turnOver = performance.now() >= turnEnds;
      // A draining worker starts no new (billed) call: the next message waits for another worker.
      const handBack = draining;
      const next = await patiently(() => options.mailbox.advance(conversationId, fence, done, { ...read, turnOver, handBack }));
      if (next === 'lost') return { lost: true };
      processed++;
      if (next?.yieldTurn) {
        // The turn is over and another job waits in line: this job keeps the conversation (its
        // lease) but goes back in line with its channel's backlog as priority, so a quiet
        // channel's job is taken before a busy conversation's next message, and this
        // conversation's order still holds. With nobody in line, the turn goes on. A draining
        // worker hands every conversation back this way, whoever waits.
        if (handBack) options.logger.info({ conversationId }, 'shutting down: the conversation goes back in line for the next worker');
        const priority = backlogPriority(next.channelBacklog);
        if (storedPriority(job) !== priority) await job.changePriority({ priority });
        await job.moveToDelayed(Date.now(), token);
        throw new DelayedError();
      }
      head = next;
      headReadAt = performance.now();
    }
    return { processed };
  };

  // Retry waits and handed-back turns run on Redis's clock, whatever this machine's says
  // (redis-time-backend.ts); measured on the node that holds the queue.
  const clock = new RedisTimeEstimate(async () => redisTimeMsAt((await options.queue.backend.client) as unknown as Redis, options.queue.toKey('meta')), {
    onError: (err) => options.logger.debug({ ...errorFields(err) }, "could not read Redis's clock"),
  });
  const backendFactory = onRedisTime(fetchAcquire.backendFactory, clock);

  // Redis out of memory (or read-only after a failover) fails every fetch: say so in plain words
  // once a minute, not BullMQ's raw reply several times a second.
  const refusalLine = oncePer(60_000);
  const workers = fetchLoops(options.concurrency).map(
    (slots, i) =>
      new Worker<ChatJobData, JobResult>(QUEUE_NAME, processJob, {
        connection: options.connection,
        prefix: options.prefix,
        concurrency: slots,
        lockDuration: options.lockDurationMs,
        stalledInterval: options.stalledIntervalMs,
        // The stalled-job check looks at the whole queue: one per process is enough.
        skipStalledCheck: i > 0,
        // A job stalls each time its worker dies; it must always come back, never fail for it.
        maxStalledCount: 1_000,
        // queue.rateLimit() only takes effect on a worker that has a limiter (bullmq 6).
        limiter: { max: 1_000_000, duration: 1_000 },
        // Jobs that threw (RETRY_AFTER_THROW); jobs queued with BullMQ's own types keep theirs.
        settings: { backoffStrategy: (attemptsMade: number) => retryAfterThrowMs(attemptsMade) },
      }, backendFactory),
  );
  for (const worker of workers) watch(worker);

  function watch(worker: Worker<ChatJobData, JobResult>): void {
    // Redis was away longer than the lock: BullMQ finds no lock to renew, and the stalled check
    // would hand the job out while its agent call still runs (a second billed call). A job still
    // active with no lock is this worker's: its lock is taken back (an answer recorded meanwhile
    // takes it back too, record-6.lua).
    worker.on('lockRenewalFailed', (jobIds) => {
      for (const jobId of jobIds) {
        const token = tokens.get(jobId);
        if (!token || abandoned) continue;
        options.mailbox
          .retakeLock({ jobId, token }, options.lockDurationMs)
          .then((taken) => taken && options.logger.warn({ jobId }, 'took back a job lock that lapsed while Redis was away'))
          .catch((err: Error) => options.logger.debug({ jobId, ...errorFields(err) }, 'could not take back a lapsed job lock'));
      }
    });
    // A Redis outage has its own lost/back lines (app.ts); repeating it per retry buries them.
    worker.on('error', (err) => {
      if (isRedisConnectionError(err)) return options.logger.debug({ ...errorFields(err) }, 'worker: Redis connection error');
      const words = redisRefusalWords(err);
      if (words === undefined) return options.logger.error({ ...errorFields(err) }, 'worker error');
      if (refusalLine(words)) options.logger.error({ ...errorFields(err) }, words);
    });
    worker.on('failed', (job, err) => {
      if (!job) return;
      options.logger.error({ jobId: job.id, attemptsMade: job.attemptsMade, ...errorFields(err) }, 'job failed');
      // A job that failed for good may still hold its conversation: wake the conversation
      // with a fresh job, which takes over (see process above).
      if (job.attemptsMade >= (job.opts.attempts ?? 1)) {
        options.queue
          .add(WAKE_CONVERSATION, job.data, { jobId: `${job.id}-wake-${Date.now()}` })
          .catch((e: Error) => options.logger.error({ ...errorFields(e) }, 'could not wake a conversation'));
      }
    });
  }

  // Heals conversations stranded by a crash between accepting a message and queueing its job.
  // Push lists every conversation until a job takes it, so this looks only at those listed for
  // a few seconds (not a scan of the keyspace) and queues the head's own job: a no-op when
  // that job exists and merely waits its turn.
  const strandedAfterMs = options.strandedAfterMs ?? 10_000;
  let sweeping = false;
  const sweep = async () => {
    if (sweeping) return;
    sweeping = true;
    try {
      for (const stranded of await options.mailbox.stranded(strandedAfterMs, 500)) {
        const m = stranded.message;
        if (!m) continue;
        if (stranded.holder) {
          // Messages pushed behind a holder have no job of their own: only a holder that ended
          // without releasing the conversation needs a fresh job (which takes it over).
          const state = await options.queue.getJobState(stranded.holder);
          if (state !== 'completed' && state !== 'failed' && state !== 'unknown') continue;
          await options.chatQueue.wake(m, stranded.messageId, { jobId: `${jobIdFor(m.platform, stranded.messageId)}-wake-${Date.now()}` });
        } else {
          await options.chatQueue.wake(m, stranded.messageId, { jobId: jobIdFor(m.platform, stranded.messageId) });
        }
        options.logger.info({ conversationId: stranded.conversationId }, 'woke a conversation whose messages had no job');
      }
    } catch (err) {
      // While Redis is away the one "Redis connection lost" line says it all; the sweep retries.
      const level = isRedisConnectionError(err) ? 'debug' : 'warn';
      options.logger[level]({ ...errorFields(err) }, 'mailbox sweep failed');
    } finally {
      sweeping = false;
    }
  };
  const sweepTimer = setInterval(() => void sweep(), options.sweepIntervalMs ?? 5_000);
  sweepTimer.unref();
  void sweep();

  let closing: Promise<void> | undefined;
  /** Set when close() starts: jobs finish the message they are on and start no other (no new billed call). */
  let draining = false;
  /** Set when a shutdown timed out: jobs still running start no new step (another worker resumes them). */
  let abandoned = false;
  // One function for every job's fence (a closure per job costs more than it looks under tsx).
  const isAbandoned = () => abandoned;
  return {
    workers,
    close: (timeoutMs) => {
      closing ??= (async () => {
        draining = true;
        clearInterval(sweepTimer);
        clock.stop();
        let timer: NodeJS.Timeout | undefined;
        const graceful = Promise.all(workers.map((w) => w.close())).then(() => true);
        const timeout = new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), timeoutMs);
        });
        const finished = await Promise.race([graceful, timeout]);
        clearTimeout(timer);
        if (!finished) {
          abandoned = true;
          // BullMQ's close() can't be forced once a graceful close is under way, so stop waiting:
          // the jobs still running keep their locks until those lapse, and the stalled check then
          // returns them to the queue for another worker (their progress records say where to resume).
          // Handing them back now would let another worker start while this one's step is under way.
          const { lockDurationMs, stalledIntervalMs } = options;
          options.logger.warn(
            { timeoutMs, lockDurationMs, stalledIntervalMs },
            'in-flight jobs did not finish in time: they stay locked, and another worker (or this one restarted) picks them up once their locks lapse, within about WORKER_LOCK_DURATION_MS + WORKER_STALLED_INTERVAL_MS',
          );
          graceful.catch(() => {});
        }
      })();
      return closing;
    },
  };
}
