import type { Redis } from 'ioredis';
import { ConfigError } from '../config/config-error.js';
import type { Platform } from '../core/conversation.js';

/**
 * Which platforms the deployment's ingress serves, so that a worker started without one's
 * settings is stopped at start-up, not found out by losing that platform's messages. Each
 * ingress writes its platforms with the time (a hash); a worker refuses to start while an
 * ingress has served a platform it cannot answer within the last `RECENT_MS`.
 */
const RECENT_MS = 10 * 60_000;
/** How often an ingress says again what it serves (well inside RECENT_MS). */
export const ANNOUNCE_EVERY_MS = 2 * 60_000;

/** What a worker needs to answer a platform's messages. */
const SETTINGS: Partial<Record<Platform, string>> = {
  slack: 'SLACK_BOT_TOKEN (or, with "Add to Slack", SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and INSTALLATION_ENCRYPTION_KEY)',
  discord: 'DISCORD_TOKEN',
};

const keyOf = (storePrefix: string) => `${storePrefix}:ingress-platforms`;

export async function announceIngressPlatforms(redis: Redis, storePrefix: string, platforms: readonly Platform[], now = Date.now()): Promise<void> {
  if (platforms.length === 0) return;
  await redis.hset(keyOf(storePrefix), Object.fromEntries(platforms.map((p) => [p, String(now)])));
}

/** Platforms an ingress served lately that `own` (this worker's) does not include. */
export async function platformsWithoutWorker(redis: Redis, storePrefix: string, own: readonly Platform[], now = Date.now()): Promise<Platform[]> {
  const served = await redis.hgetall(keyOf(storePrefix));
  return Object.entries(served)
    .filter(([platform, at]) => now - Number(at) < RECENT_MS && !own.includes(platform as Platform) && platform in SETTINGS)
    .map(([platform]) => platform as Platform);
}

/** The start-up refusal, naming what to set. */
export function workerCoverageProblem(missing: readonly Platform[]): ConfigError {
  return new ConfigError(
    missing.map(
      (p) =>
        `an ingress of this deployment (same REDIS_URL and QUEUE_PREFIX) serves ${p}, but this worker has no ${p} settings, so it would take ${p} messages it cannot answer: give every worker ${SETTINGS[p]} too`,
    ),
  );
}
