import type { Redis } from 'ioredis';

/** How long an assistant thread's context is remembered after its last change. */
const TTL_SECONDS = 30 * 24 * 3600;

/**
 * One message of an assistant thread as the bridge saw it: the user's (queued for the agent)
 * or the agent's (a reply chunk it posted). Raw Slack text; the bridge's notices are not turns.
 */
export interface AssistantTurn {
  ts: string;
  /** The user who wrote it; absent for the agent's reply. */
  user?: string;
  agent?: boolean;
  text: string;
}

/** Bounds of the turns kept per thread: what one transcript can use (THREAD_CONTEXT_MAX_*). */
export interface TurnBounds {
  maxMessages: number;
  maxChars: number;
}

/**
 * What the bridge remembers per Slack assistant thread (the DM channel + thread_ts): the
 * channel the user was looking at (`assistant_thread_started` / `_context_changed`), and
 * whether the thread has its title yet. One hash per thread, expiring 30 days after last use.
 *
 * And the thread's exchange, a capped list of turns: an assistant thread is a DM between one
 * user and the bot, so the bridge sees every message in it and every reply it posts, and its
 * own record is the transcript. Reading it back from Slack (`conversations.replies`) for each
 * message costs a read that apps outside the Marketplace get once a minute per workspace.
 */
export interface AssistantThreads {
  /**
   * Also marks the thread as an assistant thread (Slack started it, or said its context
   * changed). `fromStart`: the bridge saw the thread start, so its record of turns is complete.
   */
  setContextChannel(dm: string, threadTs: string, channelId: string | undefined, fromStart?: boolean): Promise<void>;
  /** Whether Slack started this thread as an assistant thread, a plain DM thread, or not known. */
  kind(dm: string, threadTs: string): Promise<'assistant' | 'plain' | undefined>;
  /**
   * What a read of the thread from Slack said (its root's subtype): an assistant thread,
   * with the turns before the message being handled (`complete` when that was the whole
   * thread), or a plain DM thread.
   */
  recognise(dm: string, threadTs: string, isAssistant: boolean, earlier?: { turns: AssistantTurn[]; complete: boolean }): Promise<void>;
  contextChannel(dm: string, threadTs: string): Promise<string | undefined>;
  /** True exactly once per thread: the first message sets the title. */
  claimTitle(dm: string, threadTs: string): Promise<boolean>;
  /** Adds turns to the thread's record (the oldest beyond the bound drop out). */
  addTurns(dm: string, threadTs: string, turns: AssistantTurn[]): Promise<void>;
  /** The thread's recorded turns in the order added, and whether they are the whole thread. */
  turns(dm: string, threadTs: string): Promise<{ complete: boolean; turns: AssistantTurn[] }>;
  /** Deletes every thread recorded in these DMs (the app left their workspace); returns how many. */
  forgetDms(dms: Iterable<string>): Promise<number>;
}

export function createAssistantThreads(redis: Redis, prefix: string, bounds: TurnBounds = { maxMessages: 20, maxChars: 4000 }): AssistantThreads {
  const key = (dm: string, threadTs: string) => `${prefix}:slack:assistant:${dm}:${threadTs}`;
  const turnsKey = (dm: string, threadTs: string) => `${prefix}:slack:assistant-turns:${dm}:${threadTs}`;
  // The threads recorded per DM, so that an uninstall finds them without scanning the keyspace.
  const threadsOfKey = (dm: string) => `${prefix}:slack:assistant-threads:${dm}`;
  // A longer text could not be sent in a transcript anyway.
  const encode = (t: AssistantTurn) => JSON.stringify({ ...t, text: t.text.slice(0, bounds.maxChars) });
  const maxTurns = Math.max(1, bounds.maxMessages);
  return {
    async setContextChannel(dm, threadTs, channelId, fromStart) {
      const k = key(dm, threadTs);
      const tx = redis.multi().hset(k, 'started', '1').hdel(k, 'plain');
      if (fromStart) tx.hset(k, 'log', '1');
      if (channelId) tx.hset(k, 'channel', channelId);
      else tx.hdel(k, 'channel');
      // The turns live as long as the mark that says they are the whole thread.
      tx.expire(k, TTL_SECONDS).expire(turnsKey(dm, threadTs), TTL_SECONDS);
      await tx.sadd(threadsOfKey(dm), threadTs).expire(threadsOfKey(dm), TTL_SECONDS).exec();
    },
    async kind(dm, threadTs) {
      const [exists, plain] = (await redis.multi().exists(key(dm, threadTs)).hexists(key(dm, threadTs), 'plain').exec()) ?? [];
      if (exists?.[1] !== 1) return undefined;
      // Any other field counts: hashes written before the `started` mark have the context or title.
      return plain?.[1] === 1 ? 'plain' : 'assistant';
    },
    async recognise(dm, threadTs, isAssistant, earlier) {
      const k = key(dm, threadTs);
      if (!isAssistant) {
        await redis.multi().hset(k, 'plain', '1').expire(k, TTL_SECONDS).exec();
        return;
      }
      const tk = turnsKey(dm, threadTs);
      const tx = redis.multi().hset(k, 'started', '1').hdel(k, 'plain');
      if (earlier?.complete) tx.hset(k, 'log', '1');
      tx.expire(k, TTL_SECONDS).sadd(threadsOfKey(dm), threadTs).expire(threadsOfKey(dm), TTL_SECONDS);
      if (earlier?.turns.length) tx.rpush(tk, ...earlier.turns.slice(-maxTurns).map(encode)).ltrim(tk, -maxTurns, -1).expire(tk, TTL_SECONDS);
      await tx.exec();
    },
    async contextChannel(dm, threadTs) {
      return (await redis.hget(key(dm, threadTs), 'channel')) ?? undefined;
    },
    async claimTitle(dm, threadTs) {
      const k = key(dm, threadTs);
      const [[, set] = []] = (await redis.multi().hsetnx(k, 'titled', '1').expire(k, TTL_SECONDS).exec()) ?? [];
      return set === 1;
    },
    async addTurns(dm, threadTs, turns) {
      if (turns.length === 0) return;
      const tk = turnsKey(dm, threadTs);
      await redis
        .multi()
        .rpush(tk, ...turns.map(encode))
        .ltrim(tk, -maxTurns, -1)
        .expire(tk, TTL_SECONDS)
        .expire(key(dm, threadTs), TTL_SECONDS)
        .exec();
    },
    async turns(dm, threadTs) {
      const [complete, raw] = (await redis.multi().hexists(key(dm, threadTs), 'log').lrange(turnsKey(dm, threadTs), 0, -1).exec()) ?? [];
      const turns: AssistantTurn[] = [];
      for (const item of (raw?.[1] as string[] | undefined) ?? []) {
        try {
          turns.push(JSON.parse(item) as AssistantTurn);
        } catch {
          // A damaged entry is left out, not the whole transcript.
        }
      }
      return { complete: complete?.[1] === 1, turns };
    },
    async forgetDms(dms) {
      let forgotten = 0;
      for (const dm of dms) {
        const threads = await redis.smembers(threadsOfKey(dm));
        // One key per command: with Redis Cluster the keys of one DM sit in different slots.
        await Promise.all(threads.flatMap((ts) => [redis.unlink(key(dm, ts)), redis.unlink(turnsKey(dm, ts))]));
        await redis.unlink(threadsOfKey(dm));
        forgotten += threads.length;
      }
      return forgotten;
    },
  };
}
