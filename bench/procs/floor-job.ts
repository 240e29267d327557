/** The floor's job: everything the worker needs, in the job itself (no mailbox). */
export interface FloorJob {
  messageId: string;
  channelId: string;
  instanceId: string;
  text: string;
}

/** Queue name used by both paths. */
export const BENCH_QUEUE = 'chat';
