import type { Json } from './payloads.js';
import type { Store } from './store.js';
import type { EmuChannel } from './world.js';

const TWO_WEEKS_MS = 14 * 24 * 3_600_000;
const DISCORD_EPOCH = 1_420_070_400_000n;

/**
 * `POST /channels/{id}/messages/bulk-delete` as Discord takes it: 2 to 100 message IDs, none of a
 * message older than 2 weeks (by its snowflake), never in a DM. IDs of messages that no longer
 * exist count and are skipped. Deletes them from `store`, calls `deleted` (which dispatches
 * MESSAGE_DELETE_BULK) and answers 204; or answers Discord's refusal.
 */
export function bulkDelete(channel: EmuChannel, body: Json, store: Store, deleted: (channel: EmuChannel, ids: string[]) => void): { status: number; body?: Json } {
  if (channel.guildId === undefined) return { status: 403, body: { message: 'Cannot execute action on a DM channel', code: 50003 } };
  const ids: unknown = body.messages;
  if (!Array.isArray(ids) || ids.length < 2 || ids.length > 100 || !ids.every((id) => typeof id === 'string' && /^\d{17,20}$/.test(id))) {
    const errors = { messages: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH', message: 'Must be between 2 and 100 in length.' }] } };
    return { status: 400, body: { message: 'Invalid Form Body', code: 50035, errors } };
  }
  const valid = ids as string[];
  if (valid.some((id) => Number((BigInt(id) >> 22n) + DISCORD_EPOCH) < Date.now() - TWO_WEEKS_MS)) {
    return { status: 400, body: { message: 'You can only bulk delete messages that are under 14 days old.', code: 50034 } };
  }
  const unique = [...new Set(valid)];
  for (const id of unique) store.deleteMessage(channel.id, id);
  deleted(channel, unique);
  return { status: 204 };
}
