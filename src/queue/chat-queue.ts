import { Queue, type ConnectionOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { Mailbox } from './mailbox.js';
import { QUEUE_NAME, jobIdFor, type ChatJobData, type ChatMessage } from './types.js';

export interface ChatQueueOptions {
  /** Connection for BullMQ's Queue (not blocking). */
  connection: ConnectionOptions;
  /** Connection for the mailbox scripts. */
  redis: Redis;
  /** BullMQ key prefix (a `{hash tag}` in Redis Cluster). */
  prefix: string;
  keepCompleted: { age: number; count: number };
  keepFailed: { age: number; count: number };
}

/** The producer side: accepts a message into its conversation's mailbox and queues its job. */
export class ChatQueue {
  readonly queue: Queue<ChatJobData>;
  readonly mailbox: Mailbox;

  constructor(private readonly options: ChatQueueOptions) {
    this.queue = new Queue<ChatJobData>(QUEUE_NAME, {
      connection: options.connection,
      prefix: options.prefix,
      defaultJobOptions: {
        // Our own per-message attempts decide give-up; these only cover unexpected throws
        // (a Redis outage mid-job), which must never drop a conversation.
        attempts: 50,
        backoff: { type: 'exponential', delay: 1000 },
        removeOnComplete: options.keepCompleted,
        removeOnFail: options.keepFailed,
      },
    });
    this.mailbox = new Mailbox({ redis: options.redis, prefix: `${options.prefix}:${QUEUE_NAME}` });
  }

  /**
   * Accepts a message. A message seen before is not pushed again, but its job is re-added
   * (a no-op while it exists), so a crash between the two steps heals on redelivery.
   */
  async enqueue(message: ChatMessage): Promise<{ status: 'queued' | 'duplicate'; jobId: string }> {
    const fresh = await this.mailbox.push(message);
    const jobId = jobIdFor(message.platform, message.messageId);
    await this.queue.add(
      'chat',
      {
        platform: message.platform,
        conversationId: message.conversationId,
        messageId: message.messageId,
        instanceId: message.instanceId,
        channelId: message.channelId,
        userId: message.userId,
      },
      { jobId },
    );
    return { status: fresh ? 'queued' : 'duplicate', jobId };
  }

  async counts(): Promise<{ waiting: number; active: number; completed: number; failed: number; delayed: number }> {
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
