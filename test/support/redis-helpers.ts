import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

export const REDIS_URL = 'redis://127.0.0.1:6379';

/** A connection to the test Redis, and a key prefix of its own for one test file. */
export function testRedis(): { redis: Redis; prefix: string } {
  return { redis: new Redis(REDIS_URL, { maxRetriesPerRequest: 2 }), prefix: `test-${randomUUID()}` };
}

export async function keysUnder(redis: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

/** Deletes every key under the prefix (SCAN + DEL) and closes the connection. */
export async function cleanup(redis: Redis, prefix: string): Promise<void> {
  const keys = await keysUnder(redis, prefix);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
}

/** Every key under the prefix and every value it holds, as text, whatever the key's type. */
export async function dumpAll(redis: Redis, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for (const key of await keysUnder(redis, prefix)) {
    out.push(key);
    const type = await redis.type(key);
    if (type === 'string') out.push((await redis.get(key)) ?? '');
    else if (type === 'hash') out.push(...Object.entries(await redis.hgetall(key)).flat());
    else if (type === 'list') out.push(...(await redis.lrange(key, 0, -1)));
    else if (type === 'set') out.push(...(await redis.smembers(key)));
    else if (type === 'zset') out.push(...(await redis.zrange(key, '0', '-1')));
    else if (type === 'stream') {
      for (const [id, fields] of (await redis.xrange(key, '-', '+')) as Array<[string, string[]]>) out.push(id, ...fields);
    } else out.push(`<unknown type ${type}>`);
  }
  return out;
}
