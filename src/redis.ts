import { Redis, type RedisOptions } from 'ioredis';
import type { Config } from './config/load.js';

/**
 * Opens a Redis connection from config. BullMQ's blocking connections need
 * `maxRetriesPerRequest: null`; plain connections keep ioredis's default so a call
 * fails (and the caller can answer) instead of waiting forever while Redis is down.
 */
export function createRedis(config: Config['redis'], options: { blocking?: boolean; name?: string } = {}): Redis {
  const base: RedisOptions = {
    connectionName: options.name,
    maxRetriesPerRequest: options.blocking ? null : 3,
    enableReadyCheck: true,
    // Back off up to 2 s between reconnects; never give up (Redis restarts must heal by themselves).
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), 2000),
  };
  return new Redis(config.url, base);
}

/** BullMQ key prefix. Braces make it a Redis Cluster hash tag so a queue's keys share a slot. */
export function bullPrefix(config: Config): string {
  return config.redis.clusterNodes.length > 0 ? `{${config.queue.prefix}}` : config.queue.prefix;
}
