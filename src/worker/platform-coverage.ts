import type { Redis } from 'ioredis';
import { ConfigError } from '../config/config-error.js';
import type { PlatformSettings } from '../config/platform-settings.js';
import type { Platform } from '../core/conversation.js';
import type { ChatMessage } from '../queue/types.js';
import type { MessageScope } from './message-scope.js';
import { lostJob, type StepResult } from './step-result.js';

/**
 * Which platforms the deployment's ingress serves, so that a worker started without one's
 * settings is stopped at start-up, not found out by losing that platform's messages. Each
 * ingress writes its platforms with the time (a hash); a worker refuses to start while an
 * ingress has served a platform it cannot answer within the last `RECENT_MS`.
 */
const RECENT_MS = 10 * 60_000;
/** How often an ingress says again what it serves (well inside RECENT_MS). */
const ANNOUNCE_EVERY_MS = 2 * 60_000;

const keyOf = (storePrefix: string) => `${storePrefix}:ingress-platforms`;

async function announceIngressPlatforms(redis: Redis, storePrefix: string, platforms: readonly Platform[], now = Date.now()): Promise<void> {
  if (platforms.length === 0) return;
  await redis.hset(keyOf(storePrefix), Object.fromEntries(platforms.map((p) => [p, String(now)])));
}

/**
 * Platforms an ingress served lately that `own` (this worker's) does not include, and that need
 * settings of their own (a token: `toRunForReal` in `settings`, every platform's settings module).
 */
async function platformsWithoutWorker(redis: Redis, storePrefix: string, own: readonly Platform[], settings: readonly PlatformSettings[], now = Date.now()): Promise<Platform[]> {
  const served = await redis.hgetall(keyOf(storePrefix));
  const needsSettings = (p: Platform) => settings.some((s) => s.platform === p && s.toRunForReal !== undefined);
  return (Object.keys(served) as Platform[]).filter((p) => now - Number(served[p]) < RECENT_MS && !own.includes(p) && needsSettings(p));
}

/** The start-up refusal, naming what to set (from the platform's settings module, when known). */
function workerCoverageProblem(missing: readonly Platform[], settings: readonly PlatformSettings[]): ConfigError {
  return new ConfigError(
    missing.map((p) => {
      const variables = settings.find((s) => s.platform === p)?.toRunForReal?.variables ?? `the ${p} settings`;
      return `an ingress of this deployment (same REDIS_URL and QUEUE_PREFIX) serves ${p}, but this worker has no ${p} settings, so it would take ${p} messages it cannot answer: give every worker ${variables} too`;
    }),
  );
}

/** How long a message this worker cannot answer (no reply port for its platform) waits for another worker. */
const NO_PORT_RETRY_MS = 10_000;

/**
 * A message of a platform this worker has no settings for (it started before an ingress served
 * that platform): it waits for a worker that has them, or for this one once they are fixed.
 * `firstThisMinute` keeps the error to one line a minute per platform.
 */
export async function leaveToAnotherWorker(m: ChatMessage, startedBefore: number, scope: MessageScope, firstThisMinute: (key: string) => boolean): Promise<StepResult> {
  if (firstThisMinute(m.platform)) {
    scope
      .log()
      .error(
        { platform: m.platform },
        `this worker has no ${m.platform} settings, so it cannot answer ${m.platform} messages: they wait for a worker that has them; give every worker the platform's token`,
      );
  }
  // The read that handed it over marked its call started: no call was made, so the mark is taken back.
  if (!(await scope.record({ started: startedBefore || '' }))) return lostJob(scope.log());
  return { outcome: 'retry', decision: { action: 'retry', delayMs: NO_PORT_RETRY_MS, counts: false } };
}

/** Refuses a worker that cannot answer a platform an ingress of the deployment served lately. */
export async function assertWorkerCoversIngress(redis: Redis, storePrefix: string, own: readonly Platform[], settings: readonly PlatformSettings[]): Promise<void> {
  const missing = await platformsWithoutWorker(redis, storePrefix, own, settings);
  if (missing.length > 0) throw workerCoverageProblem(missing, settings);
}

/** An ingress says which platforms it serves, now and every ANNOUNCE_EVERY_MS; returns the stop. */
export function keepAnnouncing(redis: Redis, storePrefix: string, platforms: readonly Platform[], onError: (err: unknown) => void): Promise<() => void> {
  const announce = () => announceIngressPlatforms(redis, storePrefix, platforms).catch(onError);
  const timer = setInterval(() => void announce(), ANNOUNCE_EVERY_MS).unref();
  return announce().then(() => () => clearInterval(timer));
}
