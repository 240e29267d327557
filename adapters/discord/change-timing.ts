import { SnowflakeUtil } from 'discord.js';
import { editOrderAt, type ChangeTiming } from '../../src/queue/early-change.js';

/**
 * When a Discord edit or deletion was made (src/queue/early-change.ts): the message's time is in
 * its snowflake ID (a deletion carries nothing else), an edit's place is its `edited_timestamp`.
 * With the message's time, a change that finds nothing stored of a message sent a moment ago is
 * kept for the push that stores it: after a hand-over, a question sent while no process held the
 * shard reaches the new one only through its catch-up's replay, and an edit or deletion made just
 * after that RESUME comes live, maybe before the replayed question is stored.
 */
export function discordChangeTiming(messageId: string, editedTimestamp?: number | null): ChangeTiming | undefined {
  let sentAt: number;
  try {
    sentAt = SnowflakeUtil.timestampFrom(messageId);
  } catch {
    return undefined;
  }
  // Not a snowflake (or one from before Discord's epoch): no time to judge recency by.
  if (!Number.isFinite(sentAt) || sentAt <= Number(SnowflakeUtil.epoch)) return undefined;
  const order = editOrderAt(editedTimestamp);
  return { sentAt, ...(order ? { order } : {}) };
}
