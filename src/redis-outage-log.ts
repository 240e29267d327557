import type { Redis } from 'ioredis';
import { errorFields, type Logger } from './logger.js';

export interface RedisOutageLog {
  /** From now on a lost connection is not logged (the bridge is stopping, or start-up failed). */
  quiet(): void;
}

/**
 * Until the first connection, start-up reports an unreachable Redis in one line of its own.
 * After it, one line when Redis goes away and one when it is back: every connection and every
 * retry notices an outage, and a line for each would bury it. `onBack` runs each time it is back.
 */
export function logRedisOutages(redis: Redis, logger: Logger, onBack: () => void): RedisOutageLog {
  let connectedOnce = false;
  let redisLost = false;
  let quiet = false;
  const lost = (err?: Error) => {
    if (!connectedOnce || redisLost || quiet) return;
    redisLost = true;
    logger.warn({ ...(err ? errorFields(err) : {}) }, 'Redis connection lost: the queue is unavailable, retrying');
  };
  redis.on('ready', () => {
    if (redisLost) {
      logger.info('Redis connection is back: the queue works again');
      onBack();
    }
    connectedOnce = true;
    redisLost = false;
  });
  redis.on('error', (err) => {
    if (redisLost || !connectedOnce) return;
    logger.debug({ ...errorFields(err) }, 'redis connection error');
    lost(err);
  });
  redis.on('close', () => lost());
  return { quiet: () => void (quiet = true) };
}
