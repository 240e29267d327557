import { DelayedError, Worker, type ConnectionOptions, type Job, type Queue } from 'bullmq';
import type { Logger } from '../logger.js';
import type { Mailbox, MailboxHead } from '../queue/mailbox.js';
import { QUEUE_NAME, type ChatJobData } from '../queue/types.js';
import type { DropLog } from '../diagnostics/drop-log.js';
import type { MessageProcessor } from './process-message.js';
import { isRedisConnectionError } from '../redis-errors.js';

export interface ChatWorkerOptions {
  /** A connection BullMQ may block on (`maxRetriesPerRequest: null`). */
  connection: ConnectionOptions;
  prefix: string;
  queue: Queue<ChatJobData>;
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
  /** How often stranded conversations are looked for. @defaultValue 300000 */
  sweepIntervalMs?: number;
}

export interface ChatWorker {
  worker: Worker<ChatJobData>;
  /** Stops taking jobs, lets in-flight ones finish within `timeoutMs`, then closes. Idempotent. */
  close(timeoutMs: number): Promise<void>;
}

/** Result of one job, visible in the dashboard. */
type JobResult = { processed: number } | { behind: string } | { lost: true };

/**
 * Consumes chat jobs. A job drains its conversation's mailbox in order (see mailbox.ts);
 * when another job holds the conversation, this one finishes at once as "behind" it.
 */
export function startChatWorker(o: ChatWorkerOptions): ChatWorker {
  const process = async (job: Job<ChatJobData>, token?: string): Promise<JobResult> => {
    const conversationId = job.data.conversationId;
    const holder = job.id!;
    let acquired = await o.mailbox.acquire(conversationId, holder);
    if (!acquired.held) {
      const state = await o.queue.getJobState(acquired.holder);
      // A holder whose job ended without releasing (it failed for good) is replaced.
      if (state === 'completed' || state === 'failed' || state === 'unknown') {
        if (await o.mailbox.takeOver(conversationId, acquired.holder, holder)) {
          o.logger.warn({ conversationId, from: acquired.holder }, 'took over a conversation from a finished job');
          acquired = await o.mailbox.acquire(conversationId, holder);
        }
      }
      if (!acquired.held) {
        // Waiting behind a message that is itself waiting (retry, rate limit) is worth explaining.
        if ((state === 'delayed' || state === 'waiting') && job.data.channelId && job.data.userId) {
          await o.drops?.record(job.data.platform, job.data.channelId, {
            messageId: job.data.messageId,
            userId: job.data.userId,
            reason: 'queued',
            at: Date.now(),
          });
        }
        return { behind: acquired.holder };
      }
    }

    let head: MailboxHead | undefined = acquired.head;
    let processed = 0;
    while (head) {
      if (head.message) {
        const result = await o.processor.process(head, async () => token === undefined || (await job.extendLock(token, o.lockDurationMs)) === 1);
        if (result.outcome === 'lost') return { lost: true };
        if (result.outcome === 'retry') {
          const { decision } = result;
          if (decision.action === 'rate-limit') {
            await o.queue.rateLimit(decision.delayMs);
            throw Worker.RateLimitError();
          }
          // The job keeps the conversation while it waits, so later messages stay behind it.
          await job.moveToDelayed(Date.now() + decision.delayMs, token);
          throw new DelayedError();
        }
      } else {
        o.logger.error({ conversationId, messageId: head.messageId }, 'message record missing; skipping it');
      }
      head = await o.mailbox.advance(conversationId, holder, head.messageId);
      processed++;
    }
    return { processed };
  };

  const worker = new Worker<ChatJobData, JobResult>(QUEUE_NAME, process, {
    connection: o.connection,
    prefix: o.prefix,
    concurrency: o.concurrency,
    lockDuration: o.lockDurationMs,
    stalledInterval: o.stalledIntervalMs,
    // A job stalls each time its worker dies; it must always come back, never fail for it.
    maxStalledCount: 1_000,
    // queue.rateLimit() only takes effect on a worker that has a limiter (bullmq 6).
    limiter: { max: 1_000_000, duration: 1_000 },
  });

  // A Redis outage has its own lost/back lines (app.ts); repeating it per retry buries them.
  worker.on('error', (err) =>
    isRedisConnectionError(err)
      ? o.logger.debug({ err: { message: err.message } }, 'worker: Redis connection error')
      : o.logger.error({ err: { message: err.message } }, 'worker error'),
  );
  worker.on('failed', (job, err) => {
    if (!job) return;
    o.logger.error({ jobId: job.id, attemptsMade: job.attemptsMade, err: { message: err.message } }, 'job failed');
    // A job that failed for good may still hold its conversation: wake the conversation
    // with a fresh job, which takes over (see process above).
    if (job.attemptsMade >= (job.opts.attempts ?? 1)) {
      o.queue
        .add('chat', job.data, { jobId: `${job.id}-wake-${Date.now()}` })
        .catch((e: Error) => o.logger.error({ err: { message: e.message } }, 'could not wake a conversation'));
    }
  });

  // Heals conversations stranded by a crash between accepting a message and queueing its job:
  // once at start, then every few minutes (a safety net, not how work is normally found).
  const sweep = async () => {
    try {
      for await (const stranded of o.mailbox.unleased()) {
        if (!stranded.message) continue;
        const m = stranded.message;
        await o.queue.add(
          'chat',
          { platform: m.platform, conversationId: stranded.conversationId, messageId: stranded.messageId, instanceId: m.instanceId },
          { jobId: `sweep-${Date.now()}-${Math.random().toString(36).slice(2, 8)}` },
        );
        o.logger.info({ conversationId: stranded.conversationId }, 'woke a conversation whose messages had no job');
      }
    } catch (err) {
      o.logger.warn({ err: { message: (err as Error).message } }, 'mailbox sweep failed');
    }
  };
  const sweepTimer = setInterval(() => void sweep(), o.sweepIntervalMs ?? 5 * 60_000);
  sweepTimer.unref();
  void sweep();

  let closing: Promise<void> | undefined;
  return {
    worker,
    close: (timeoutMs) => {
      closing ??= (async () => {
        clearInterval(sweepTimer);
        let timer: NodeJS.Timeout | undefined;
        const graceful = worker.close().then(() => true);
        const timeout = new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), timeoutMs);
        });
        const finished = await Promise.race([graceful, timeout]);
        clearTimeout(timer);
        if (!finished) {
          // BullMQ's close() can't be forced once a graceful close is under way, so stop waiting:
          // the jobs still running keep their locks until those lapse, and the stalled check then
          // returns them to the queue for another worker (their progress records say where to resume).
          o.logger.warn({ timeoutMs }, 'in-flight jobs did not finish in time; returning them to the queue');
          graceful.catch(() => {});
        }
      })();
      return closing;
    },
  };
}
