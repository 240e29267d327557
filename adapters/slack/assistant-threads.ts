import type { Redis } from 'ioredis';

/** How long an assistant thread's context is remembered after its last change. */
const TTL_SECONDS = 30 * 24 * 3600;

/**
 * What the bridge remembers per Slack assistant thread (the DM channel + thread_ts): the
 * channel the user was looking at (`assistant_thread_started` / `_context_changed`), and
 * whether the thread has its title yet. One hash per thread, expiring 30 days after last use.
 */
export interface AssistantThreads {
  /** Also marks the thread as an assistant thread (Slack started it: `assistant_thread_started`). */
  setContextChannel(dm: string, threadTs: string, channelId: string | undefined): Promise<void>;
  /** Whether Slack started this thread as an assistant thread (not any reply in a DM). */
  isAssistantThread(dm: string, threadTs: string): Promise<boolean>;
  contextChannel(dm: string, threadTs: string): Promise<string | undefined>;
  /** True exactly once per thread: the first message sets the title. */
  claimTitle(dm: string, threadTs: string): Promise<boolean>;
}

export function createAssistantThreads(redis: Redis, prefix: string): AssistantThreads {
  const key = (dm: string, threadTs: string) => `${prefix}:slack:assistant:${dm}:${threadTs}`;
  return {
    async setContextChannel(dm, threadTs, channelId) {
      const k = key(dm, threadTs);
      const tx = redis.multi().hset(k, 'started', '1');
      if (channelId) tx.hset(k, 'channel', channelId);
      else tx.hdel(k, 'channel');
      await tx.expire(k, TTL_SECONDS).exec();
    },
    async isAssistantThread(dm, threadTs) {
      // Any field counts: hashes written before the `started` mark have the context or title.
      return (await redis.exists(key(dm, threadTs))) === 1;
    },
    async contextChannel(dm, threadTs) {
      return (await redis.hget(key(dm, threadTs), 'channel')) ?? undefined;
    },
    async claimTitle(dm, threadTs) {
      const k = key(dm, threadTs);
      const [[, set] = []] = (await redis.multi().hsetnx(k, 'titled', '1').expire(k, TTL_SECONDS).exec()) ?? [];
      return set === 1;
    },
  };
}
