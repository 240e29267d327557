import { Redis } from 'ioredis';

export { SHARED_REDIS, deleteKeysAt, dumpKeysAt } from '../../support/redis-cleanup.js';


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
