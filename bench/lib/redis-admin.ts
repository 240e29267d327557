import type { Redis } from 'ioredis';

/** Deletes every key under `prefix` (each scenario and path has its own). */
export async function deleteKeys(redis: Redis, prefix: string): Promise<number> {
  let deleted = 0;
  for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 1_000 })) {
    const batch = keys as string[];
    if (batch.length) deleted += await redis.unlink(...batch);
  }
  return deleted;
}

export async function redisVersion(redis: Redis): Promise<string> {
  const info = await redis.info('server');
  return /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
}
