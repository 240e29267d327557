import type { Redis } from 'ioredis';

/**
 * Redis's clock (ms). Ingress and worker processes on several machines share one Redis, and
 * their own clocks may be minutes apart (a VM resumed from pause, a host without NTP): a time one
 * process writes and another compares, or a platform's timestamp compared with "now", is taken
 * from here (or from TIME inside the script, scripts/includes/redis-now.lua).
 */
export async function redisNowMs(redis: Redis): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}
