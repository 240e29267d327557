import { ChannelType, type Client, type Message } from 'discord.js';
import { errorFields, type Logger } from '../../src/logger.js';
import { withTimeout } from '../../src/core/with-timeout.js';
import type { RawPacket } from './gateway-sessions.js';
import type { KeyedSerial } from './serial.js';

/** The channel and the message are fetched; past this the edit is let go (and logged). */
const FETCH_MS = 10_000;

interface UpdateData {
  id?: string;
  channel_id?: string;
  content?: unknown;
  edited_timestamp?: string | null;
  author?: { id?: string };
}

export interface UncachedChannelEditOptions {
  logger: Logger;
  /** The per-channel order MESSAGE_CREATE is handled in: the edit is handled after its create. */
  serial: KeyedSerial;
  /** The edit handler (message-edit.ts), without an old message to compare with. */
  onEdit: (updated: Message) => Promise<void>;
}

/**
 * An edit (MESSAGE_UPDATE with `edited_timestamp` and content) in a channel discord.js does not
 * cache, read from the raw packet before discord.js handles it: discord.js builds a DM channel
 * only from MESSAGE_CREATE's `channel_type`, and drops the update of any message whose channel
 * it does not know, even with `Partials.Message`. A DM channel leaves the cache after an hour
 * without a message (gateway-cache.ts) and is not known after a restart until written in again:
 * the DM question waiting that long would be answered as first sent. The same holds for a thread
 * discord.js dropped (its sweeper takes archived ones; the update carries no channel type to
 * rebuild it from). The channel is fetched (and cached), then the message as it is now, and
 * handed to the edit handler, in the channel's order.
 */
export function createUncachedChannelEdit(options: UncachedChannelEditOptions): (packet: RawPacket, client: Client) => void {
  const { logger, serial, onEdit } = options;

  async function fetchAndEdit(client: Client, channelId: string, messageId: string): Promise<void> {
    const fetched = async () => {
      const channel = await client.channels.fetch(channelId);
      // A group DM is no place of the bot's (bots are not in them).
      if (!channel?.isTextBased() || channel.type === ChannelType.GroupDM) return undefined;
      return channel.messages.fetch(messageId);
    };
    const message = await withTimeout(fetched(), FETCH_MS, () => {
      throw new Error(`fetching the message took over ${FETCH_MS} ms`);
    });
    if (message) await onEdit(message);
  }

  return function onPacket(packet, client) {
    if (packet.t !== 'MESSAGE_UPDATE') return;
    const d = (packet.d ?? {}) as UpdateData;
    // Not an edit (a link embed, a pin), or one discord.js hands to its messageUpdate itself.
    if (!d.id || !d.channel_id || !d.edited_timestamp || typeof d.content !== 'string') return;
    if (client.channels.cache.has(d.channel_id)) return;
    // The bot's own replies: nothing to fetch them for (the ingress ignores them).
    if (d.author?.id === client.user?.id) return;
    const { id, channel_id: channelId } = d;
    void serial
      .run(channelId, () => fetchAndEdit(client, channelId, id))
      // The text is not logged: the edit may have taken a secret out.
      .catch((err: unknown) => logger.warn({ messageId: id, channelId, ...errorFields(err) }, 'discord: could not apply an edit to a waiting message: it may be answered as first sent'));
  };
}
