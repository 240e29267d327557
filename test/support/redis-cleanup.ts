import { Redis } from 'ioredis';

/** Deletes every key under a test's prefix (each test file uses its own). */
export async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis('redis://127.0.0.1:6379');
  try {
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 1000 })) {
      if ((keys as string[]).length) await redis.del(...(keys as string[]));
    }
  } finally {
    redis.disconnect();
  }
}

/** Every key and its value (as text) under a prefix, for secret-leak assertions. */
export async function dumpKeys(prefix: string): Promise<string> {
  const redis = new Redis('redis://127.0.0.1:6379');
  const out: string[] = [];
  try {
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
  } finally {
    redis.disconnect();
  }
  return out.join('\n');
}
