import type { Redis } from 'ioredis';
import type { Logger } from './logger.js';
import { oncePer } from './core/once-per.js';
import { isRedisAuthRefusal } from './redis-errors.js';
import type { Config } from './config/load.js';
import { withTimeout } from './core/with-timeout.js';
import { withoutUserinfo } from './core/url-userinfo.js';

/** Start-up stops here: Redis is missing, refuses our credentials, or lacks the database asked for. */
export class RedisUnavailableError extends Error {
  override name = 'RedisUnavailableError';
}

/** Where the bridge looks for Redis: the settings a start-up error must name. */
export type RedisTarget = Pick<Config['redis'], 'url' | 'sentinels' | 'sentinelName' | 'clusterNodes'> & Partial<Pick<Config['redis'], 'defaulted'>>;

/** The URL as it may be shown: without user name and password (which may hold a raw `@`). */
export function redisWhere(url: string): string {
  return withoutUserinfo(url);
}

/**
 * The Redis as the settings in use name it: with Sentinels or a Cluster, REDIS_URL's host is
 * not used (only its password and database), so blaming it would send the reader to the wrong
 * variable.
 */
function describeTarget(target: RedisTarget): { label: string; unreachable: string } {
  if (target.clusterNodes.length > 0) {
    const nodes = `REDIS_CLUSTER_NODES=${target.clusterNodes.join(',')}`;
    return { label: `Redis Cluster (${nodes})`, unreachable: `Redis Cluster is not reachable at ${nodes}: check that the nodes run and are reachable from here, or fix REDIS_CLUSTER_NODES` };
  }
  if (target.sentinels.length > 0) {
    const via = `master ${target.sentinelName ?? '?'} through REDIS_SENTINELS=${target.sentinels.join(',')}`;
    return {
      label: `Redis (${via})`,
      unreachable: `Redis is not reachable: no ${via}: check that the Sentinels run and monitor that master group, or fix REDIS_SENTINELS or REDIS_SENTINEL_NAME`,
    };
  }
  const where = redisWhere(target.url);
  // REDIS_URL was set: the operator points at a Redis of their own, and a laptop's advice is beside the point.
  if (target.defaulted === false) {
    return {
      label: `Redis at ${where}`,
      unreachable: `Redis is not reachable at ${where} (REDIS_URL): check that it runs there and that this host can reach it (host, port, firewall; ${
        where.startsWith('rediss:') ? 'a Redis without TLS never answers rediss://: use redis:// for it' : 'rediss:// for a TLS port'
      }), or fix REDIS_URL`,
    };
  }
  return {
    label: `Redis at ${where}`,
    unreachable: `Redis is not reachable at ${where}: start one with \`docker compose up -d redis\` or \`docker run -d -p 127.0.0.1:6379:6379 redis:7-alpine\`, or install it (Debian: \`apt-get install redis-server\`; macOS: \`brew install redis && brew services start redis\`), or set REDIS_URL`,
  };
}

/**
 * One line that says what is wrong with the Redis of `target`, from the first error of the
 * start-up connection: a refused password is not "not reachable", and neither is a database
 * index the server does not have. The password and database come from REDIS_URL in every mode.
 */
export function describeRedisStartupError(err: { message?: string } | undefined, target: RedisTarget): string {
  const { label, unreachable } = describeTarget(target);
  const message = err?.message ?? '';
  if (/WRONGPASS|invalid password|invalid username-password/i.test(message)) {
    return `${label}: authentication failed (wrong user name or password): fix the password in REDIS_URL (redis://:password@host:port or redis://user:password@host:port)`;
  }
  if (/NOAUTH|Authentication required/i.test(message)) {
    return `${label}: authentication failed (this Redis requires a password): put it in REDIS_URL, for example redis://:password@host:port`;
  }
  if (/DB index is out of range|invalid DB index/i.test(message)) {
    const db = /\/(\d+)\/?$/.exec(redisWhere(target.url))?.[1] ?? '?';
    return `${label}: database ${db} does not exist on this server (DB index is out of range): use a smaller number at the end of REDIS_URL, for example /0, or raise \`databases\` in redis.conf`;
  }
  if (/NOPERM|no permissions/i.test(message)) {
    return `${label}: the user in REDIS_URL lacks permissions (${message.split('\n')[0]}): grant it all commands and keys of the queue prefix, or use another user`;
  }
  return unreachable;
}

/**
 * Resolves once Redis answers a PING with the configured credentials and database; otherwise
 * rejects with a {@link RedisUnavailableError} saying what is wrong.
 */
export async function waitForRedis(redis: Redis, target: RedisTarget, timeoutMs = 5_000): Promise<void> {
  // ioredis reports a failed AUTH or SELECT as an 'error' event; a failed SELECT even leaves
  // PING answering on database 0. The SELECT reply comes before PING's on the connection, so
  // the first error is known by the time PING settles.
  let firstError: Error | undefined;
  const onError = (err: Error) => (firstError ??= err);
  redis.on('error', onError);
  try {
    await withTimeout(redis.ping(), timeoutMs, () => {
      throw new Error('timeout');
    });
  } catch (err) {
    firstError ??= err as Error;
  } finally {
    redis.off('error', onError);
  }
  if (firstError) {
    redis.disconnect();
    throw new RedisUnavailableError(describeRedisStartupError(firstError, target));
  }
}

/**
 * What to tell the operator when Redis may evict keys when it is full (`maxmemory-policy` other
 * than `noeviction`): BullMQ needs every key kept, and so does the bridge (a message's record,
 * its seen mark, the call-started count). Undefined when the policy is `noeviction` or Redis
 * does not say (INFO renamed away on a managed service).
 */
export async function evictionPolicyProblem(redis: Pick<Redis, 'info'>): Promise<{ policy: string; words: string } | undefined> {
  const info = await redis.info('memory');
  const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
  if (policy === undefined || policy === 'noeviction') return undefined;
  return {
    policy,
    words:
      `Redis evicts keys when it is full (maxmemory-policy ${policy}): set maxmemory-policy noeviction (CONFIG SET maxmemory-policy noeviction, ` +
      'or in redis.conf or the managed service\'s parameters), which BullMQ requires. Otherwise a full Redis silently drops queued messages, ' +
      'their progress and the marks that keep a message from being answered (and billed) twice',
  };
}

/**
 * After a reconnect: whether Redis kept the deployment's data, told by `markKey` (queueKeys
 * `dataMark`, set at start). Gone: Redis restarted without persistence (or was flushed), so every
 * message queued before is lost, and nobody told its sender; the operator reads it here, once
 * per deployment (the first process back sets the mark again).
 */
export async function noteDataLoss(redis: Pick<Redis, 'exists' | 'set'>, markKey: string, logger: Pick<Logger, 'error'>): Promise<void> {
  if (await redis.exists(markKey)) return;
  await redis.set(markKey, String(Date.now()));
  logger.error(
    'Redis came back without its data (restarted without persistence, or flushed): messages queued before are lost and their senders were not told, ' +
      'and /agent bind bindings, settings and audit entries made in chat are gone; turn on persistence (appendonly yes, appendfsync always: docs/operations.md, Redis)',
  );
}

/**
 * Once running: Redis refusing the password of a reconnect is said at error once a minute,
 * naming REDIS_URL (never its password). Each retry's refusal is otherwise a debug line, as for
 * a lost connection, so this is what the operator sees, beside "Redis connection lost".
 */
export function watchAuthRefusal(redis: Pick<Redis, 'on'>, target: RedisTarget, logger: Pick<Logger, 'error'>): void {
  const once = oncePer(60_000);
  redis.on('error', (err: Error) => {
    if (!isRedisAuthRefusal(err) || !once('auth')) return;
    logger.error(
      `${describeTarget(target).label} refuses the password in REDIS_URL (authentication failed: was it changed on the server?): ` +
        'nothing is queued or answered until it takes it again: put the server\'s password in REDIS_URL and restart, or set the old one back on the server',
    );
  });
}
