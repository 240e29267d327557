import { Redis } from 'ioredis';

export const SHARED_REDIS = 'redis://127.0.0.1:6379';

async function withRedis<T>(url: string, fn: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(url, { maxRetriesPerRequest: 2 });
  try {
    return await fn(redis);
  } finally {
    redis.disconnect();
  }
}

/** Deletes every key under a test's prefix. */
export function deleteKeysAt(url: string, prefix: string): Promise<void> {
  return withRedis(url, async (redis) => {
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 1000 })) {
      if ((keys as string[]).length) await redis.del(...(keys as string[]));
    }
  });
}

/** Every key under a prefix with its value as text (all Redis types), for leak assertions. */
export function dumpKeysAt(url: string, prefix: string): Promise<string> {
  return withRedis(url, async (redis) => {
    const out: string[] = [];
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 1000 })) {
      for (const key of keys as string[]) {
        const type = await redis.type(key);
        out.push(key);
        if (type === 'string') out.push((await redis.get(key)) ?? '');
        else if (type === 'hash') out.push(JSON.stringify(await redis.hgetall(key)));
        else if (type === 'list') out.push(JSON.stringify(await redis.lrange(key, 0, -1)));
        else if (type === 'set') out.push(JSON.stringify(await redis.smembers(key)));
        else if (type === 'zset') out.push(JSON.stringify(await redis.zrange(key, '0', '-1')));
        else if (type === 'stream') out.push(JSON.stringify(await redis.xrange(key, '-', '+')));
      }
    }
    return out.join('\n');
  });
}

/**
 * Fields of mailbox message records (`payload`, `reply`, `posted`, `started`, `posting`...), one
 * object per reference, in order; empty once the message was finished. A conversation keeps
 * its records in one hash: `<messageId>` = payload, `<messageId>:<field>` = progress.
 */
export async function messageRecords(
  redis: Redis,
  prefix: string,
  refs: ReadonlyArray<{ conversationId: string; messageId: string }>,
): Promise<Array<Record<string, string>>> {
  const fields = ['reply', 'posted', 'attempts', 'limited', 'started', 'posting', 'agentMessageId'];
  const batch = redis.pipeline();
  for (const ref of refs) {
    batch.hmget(`${prefix}:chat:conv:${ref.conversationId}:msgs`, ref.messageId, ...fields.map((f) => `${ref.messageId}:${f}`));
  }
  const rows = ((await batch.exec()) ?? []).map(([, r]) => r as Array<string | null>);
  return rows.map((values) => {
    const record: Record<string, string> = {};
    ['payload', ...fields].forEach((field, i) => {
      if (values?.[i] != null) record[field] = values[i]!;
    });
    return record;
  });
}

/** Fields of one mailbox message record; empty once it was finished. */
export async function messageRecord(redis: Redis, prefix: string, conversationId: string, messageId: string): Promise<Record<string, string>> {
  return (await messageRecords(redis, prefix, [{ conversationId, messageId }]))[0]!;
}
