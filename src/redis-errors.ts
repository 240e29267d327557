/** Errors that mean "Redis is not reachable now" (worth waiting out), as opposed to a bug. */
export function isRedisConnectionError(err: unknown): boolean {
  const e = err as { name?: string; message?: string; code?: string } | undefined;
  return (
    e?.name === 'MaxRetriesPerRequestError' ||
    e?.name === 'RedisTimeoutError' ||
    /ECONN|ETIMEDOUT|EPIPE|ENOTFOUND|Connection is closed|Stream isn't writeable|max retries per request|connect/i.test(`${e?.code ?? ''} ${e?.message ?? ''}`)
  );
}
