import type { Redis } from 'ioredis';

/** `text` as a literal in a Redis glob pattern (MATCH). */
const literal = (text: string) => text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);

/**
 * The message IDs in a conversation's hash of message records (`key`, see Mailbox) that start
 * with `prefix`: its progress fields (`<id>:<field>`) are left out. A scan of the hash, for rare
 * events (a message deleted), not for the message path.
 */
export async function recordIdsStartingWith(redis: Redis, key: string, prefix: string): Promise<string[]> {
  const fields = new Set<string>();
  let cursor = '0';
  do {
    const [next, page] = await redis.hscan(key, cursor, 'MATCH', `${literal(prefix)}*`, 'COUNT', 200);
    for (let i = 0; i < page.length; i += 2) fields.add(page[i]!);
    cursor = next;
  } while (cursor !== '0');
  return [...fields].filter((f) => {
    const colon = f.lastIndexOf(':');
    return colon < 0 || !fields.has(f.slice(0, colon));
  });
}
