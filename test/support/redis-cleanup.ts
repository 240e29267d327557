import { Redis } from 'ioredis';

/** The machine's Redis, which tests share (each file under its own key prefix). */
export const SHARED_REDIS = 'redis://127.0.0.1:6379';

async function withRedis<T>(url: string, fn: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(url, { maxRetriesPerRequest: 2 });
  try {
    return await fn(redis);
  } finally {
    redis.disconnect();
  }
}

/** Deletes every key under a test's prefix. */
export function deleteKeysAt(url: string, prefix: string): Promise<void> {
  return withRedis(url, async (redis) => {
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 1000 })) {
      if ((keys as string[]).length) await redis.del(...(keys as string[]));
    }
  });
}

/** Every key under a prefix with its value as text (all Redis types), for leak assertions. */
export function dumpKeysAt(url: string, prefix: string): Promise<string> {
  return withRedis(url, async (redis) => {
    const out: string[] = [];
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 1000 })) {
      for (const key of keys as string[]) {
        const type = await redis.type(key);
        out.push(key);
        if (type === 'string') out.push((await redis.get(key)) ?? '');
        else if (type === 'hash') out.push(JSON.stringify(await redis.hgetall(key)));
        else if (type === 'list') out.push(JSON.stringify(await redis.lrange(key, 0, -1)));
        else if (type === 'set') out.push(JSON.stringify(await redis.smembers(key)));
        else if (type === 'zset') out.push(JSON.stringify(await redis.zrange(key, '0', '-1')));
        else if (type === 'stream') out.push(JSON.stringify(await redis.xrange(key, '-', '+')));
      }
    }
    return out.join('\n');
  });
}

/** Deletes every key under a test's prefix (each test file uses its own). */
export function deleteKeys(prefix: string): Promise<void> {
  return deleteKeysAt(SHARED_REDIS, prefix);
}

/** Every key and its value (as text) under a prefix, for secret-leak assertions. */
export function dumpKeys(prefix: string): Promise<string> {
  return dumpKeysAt(SHARED_REDIS, prefix);
}
