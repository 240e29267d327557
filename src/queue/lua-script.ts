import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * A Lua script sent by SHA (EVALSHA), loaded on first use and again after a Redis restart
 * (NOSCRIPT), so the hot path never resends the script text.
 */
export function luaScript(lua: string, numberOfKeys: number) {
  const sha = createHash('sha1').update(lua).digest('hex');
  return async (redis: Redis, ...keysAndArgs: Array<string | number>): Promise<unknown> => {
    try {
      return await redis.evalsha(sha, numberOfKeys, ...keysAndArgs);
    } catch (err) {
      if (!String((err as Error).message).includes('NOSCRIPT')) throw err;
      return redis.eval(lua, numberOfKeys, ...keysAndArgs);
    }
  };
}
