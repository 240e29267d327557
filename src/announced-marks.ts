import type { ChainableCommander, Redis } from 'ioredis';
import { createInvalidationFeed, type InvalidationFeed } from './invalidation-feed.js';
import type { Logger } from './logger.js';

export interface AnnouncedMarksOptions {
  /** The connection marks are read and written on; the subscription duplicates it. */
  redis: Redis;
  /** The Redis key of the mark `name`. */
  key: (name: string) => string;
  /** The pub/sub channel every write announces the names it changed on. */
  channel: string;
  /** The subscription's connection name (CLIENT LIST). */
  connectionName: string;
  /** What is cached, for the warning on an unexpected subscription error. */
  what: string;
  logger?: Pick<Logger, 'warn'> | undefined;
  /** @defaultValue 10 000 marks; the oldest entry is dropped beyond it */
  maxEntries?: number;
  /** Called after a mark's entry or (undefined) every entry was dropped on news from Redis (tests). */
  onInvalidate?: ((name: string | undefined) => void) | undefined;
}

export interface AnnouncedMarks {
  /** The mark's value, or undefined when there is none: from memory once seen, while the subscription is live. */
  get(name: string): Promise<string | undefined>;
  /**
   * Runs `build`'s commands in one MULTI, followed by an announcement of each of `names` (the
   * marks they change), and drops those here. Returns the replies, `build`'s commands' first; a
   * command's error is thrown as the command's would be.
   */
  write: MarkWriter;
  /** Resolves once the subscription is live (it starts with the first lookup). */
  ready(): Promise<void>;
  /** Ends the subscription (idempotent); later lookups go to Redis. */
  close(): Promise<void>;
}

/** Runs a MULTI; a command's error is thrown as the command's would be. */
export async function execMulti(multi: ChainableCommander): Promise<unknown[]> {
  const replies = await multi.exec();
  if (!replies) throw new Error('Redis discarded the transaction');
  for (const [err] of replies) if (err) throw err;
  return replies.map(([, value]) => value);
}

/** Writes marks: `build`'s commands and an announcement of each of `names`, in one MULTI (see AnnouncedMarks.write). */
export type MarkWriter = (names: readonly string[], build: (multi: ChainableCommander) => ChainableCommander) => Promise<unknown[]>;

/**
 * `build`'s commands and an announcement on `channel` of each of `names` (the marks they change),
 * in one MULTI: for a process that writes marks and keeps no cache of them (an ingress).
 */
export function writeAnnounced(redis: Redis, channel: string): MarkWriter {
  return async (names, build) => {
    const multi = build(redis.multi());
    for (const name of names) multi.publish(channel, name);
    return execMulti(multi);
  };
}

/** A mark and when it lapses (`Infinity`: no mark, nothing lapses), read in one round trip. */
export async function readMark(redis: Redis, key: string): Promise<{ value: string | undefined; until: number }> {
  const now = Date.now();
  const [value, ttlMs] = await execMulti(redis.multi().get(key).pttl(key));
  if (typeof value !== 'string') return { value: undefined, until: Infinity };
  return { value, until: typeof ttlMs === 'number' && ttlMs > 0 ? now + ttlMs : now };
}

/**
 * A per-process cache of string marks in Redis (keys with a TTL, e.g. "this channel is gone"),
 * asked on a hot path: a mark seen once, or seen absent, is answered from memory, so the common
 * case costs no Redis round trip. Every write is announced on pub/sub in the same MULTI as it is
 * made (`write`, or a writer elsewhere doing the same), and the entry is dropped here when the
 * news arrives: Redis sends the news to every subscription before it answers the writer, so a
 * message queued after a write is taken by a worker that has the news already. Trusted only while
 * the subscription is up (invalidation-feed.ts). A cached mark lapses when its key would.
 *
 * The subscription (one more connection) is opened by the first lookup, so a process that only
 * writes (an ingress) never opens it. It ends with `close`, or when `redis` ends.
 */
export function createAnnouncedMarks(options: AnnouncedMarksOptions): AnnouncedMarks {
  const { redis } = options;
  const maxEntries = options.maxEntries ?? 10_000;
  const entries = new Map<string, { value: string | undefined; until: number }>();
  const announced = writeAnnounced(redis, options.channel);
  let feed: InvalidationFeed | undefined;
  let closed = false;
  const close = async () => {
    closed = true;
    redis.off('end', endWithRedis);
    await feed?.close();
  };
  // A cache no one closes (built by a test) must not outlive the connection it duplicated.
  const endWithRedis = () => void close();
  const feedOf = () => {
    if (feed) return feed;
    redis.once('end', endWithRedis);
    return (feed = createInvalidationFeed({
      redis,
      channel: options.channel,
      connectionName: options.connectionName,
      what: options.what,
      logger: options.logger,
      drop: (name) => (name === undefined ? entries.clear() : void entries.delete(name)),
      onInvalidate: options.onInvalidate,
    }));
  };

  return {
    async get(name) {
      // After close (shutdown), lookups go to Redis rather than open a subscription again.
      const f = closed ? undefined : feedOf();
      const entry = entries.get(name);
      if (f?.live() && entry && entry.until > Date.now()) return entry.value;
      const read = () => readMark(redis, options.key(name));
      const mark = f
        ? await f.lookup(read, (m) => {
            entries.delete(name);
            if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
            entries.set(name, m);
          })
        : await read();
      return mark.value;
    },
    async write(names, build) {
      try {
        return await announced(names, build);
      } finally {
        // Dropped here even when the write failed: it may have been made.
        for (const name of names) feed?.invalidate(name);
      }
    },
    ready: () => (closed ? Promise.resolve() : feedOf().ready()),
    close,
  };
}
