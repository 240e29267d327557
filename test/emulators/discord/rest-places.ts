/**
 * Discord's REST answers for a place that changed under the bot: a deleted channel or thread
 * (404, code 10003, as for an ID that never existed), a channel of a guild the bot was removed
 * from (403, code 50001), and a post into an archived thread (Discord unarchives it when the
 * poster may send there; a locked one refuses with 400, code 50083).
 */
import type { Store } from './store.js';
import type { EmuChannel, World } from './world.js';
import type { Reply } from './rest.js';

const refusal = (status: number, code: number, message: string): Reply => ({ status, body: { message, code } });

/** The refusal any request in `ch` meets, or undefined when the place is still there for the bot. */
export function placeRefusal(ch: EmuChannel | undefined, store: Store, world: World): Reply | undefined {
  if (!ch || store.deletedChannels.has(ch.id) || (ch.parentId !== undefined && store.deletedChannels.has(ch.parentId))) return refusal(404, 10003, 'Unknown Channel');
  if (ch.guildId !== undefined && world.leftGuilds.has(ch.guildId)) return refusal(403, 50001, 'Missing Access');
  return undefined;
}

/**
 * A message create in an archived thread: refused when it is locked; else the thread is
 * unarchived (`unarchived` tells the gateway) and the post goes on (undefined).
 */
export function archivedThreadPost(ch: EmuChannel, unarchived: (ch: EmuChannel) => void): Reply | undefined {
  if (!ch.archived) return undefined;
  if (ch.locked) return refusal(400, 50083, 'Thread is archived');
  ch.archived = false;
  unarchived(ch);
  return undefined;
}
