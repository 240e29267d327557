/** Errors that mean "Redis is not reachable now" (worth waiting out), as opposed to a bug. */
export function isRedisConnectionError(err: unknown): boolean {
  const e = err as { name?: string; message?: string; code?: string } | undefined;
  return (
    e?.name === 'MaxRetriesPerRequestError' ||
    e?.name === 'RedisTimeoutError' ||
    /ECONN|ETIMEDOUT|EPIPE|ENOTFOUND|Connection is closed|Stream isn't writeable|max retries per request|connect/i.test(`${e?.code ?? ''} ${e?.message ?? ''}`) ||
    isRedisAuthRefusal(err)
  );
}

/**
 * Redis refuses the credentials of a reconnect (its password was changed while the bridge ran):
 * for the callers, an outage like a lost connection (it ends when the password is put back);
 * for the operator, one line of its own (redis-startup.ts `watchAuthRefusal`).
 */
export function isRedisAuthRefusal(err: unknown): boolean {
  const message = (err as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' && /^(WRONGPASS|NOAUTH)\b/.test(message);
}

/**
 * Redis answers, but takes no writes for now: out of memory (`maxmemory` reached under
 * `noeviction`; a script's write says so with `script: …` after it), a replica left behind by a
 * failover (`READONLY`), a restart still loading its data (`LOADING`), a replica that lost its
 * master (`MASTERDOWN`), another script running too long (`BUSY`), a cluster in flux
 * (`TRYAGAIN`, `CLUSTERDOWN`). Each ends without the bridge doing anything, so a write that
 * records something already done (a billed answer) is worth retrying, like a lost connection.
 */
export function isRedisRefusingWrites(err: unknown): boolean {
  const message = (err as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' && /^(OOM|READONLY|LOADING|MASTERDOWN|BUSY|TRYAGAIN|CLUSTERDOWN)\b/.test(message);
}

/**
 * What an operator should read, once a minute, for an error of {@link isRedisRefusingWrites}, or
 * BullMQ's `Missing key for job …` (one per job in flight when Redis lost its data); undefined for others.
 */
export function redisRefusalWords(err: unknown): string | undefined {
  const message = (err as { message?: unknown } | undefined)?.message;
  if (typeof message !== 'string') return undefined;
  if (!isRedisRefusingWrites(err) && !message.startsWith('Missing key for job')) return undefined;
  if (message.startsWith('OOM')) {
    return 'Redis is out of memory (maxmemory reached) and refuses writes: no message is queued or answered until memory is freed or maxmemory raised (keep maxmemory-policy noeviction)';
  }
  if (message.startsWith('Missing key for job')) {
    return 'jobs vanished from Redis while this worker ran them (Redis lost its data, or someone removed them); the worker went on without them';
  }
  if (message.startsWith('READONLY')) return 'Redis refuses writes: this connection reaches a read-only replica (a failover?); point REDIS_URL (or REDIS_SENTINELS) at the primary';
  return `Redis refuses writes for now (${message.split(/[ .]/)[0]}); waiting for it`;
}
