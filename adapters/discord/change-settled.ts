import { Events, type Client } from 'discord.js';
import { TRACKED_CHANGES, type RawPacket } from './gateway-sessions.js';
import type { KeyedSerial } from './serial.js';

/**
 * Resolves once discord.js handed `packet` (being emitted as `raw`) to its own handlers (its
 * messageUpdate): in the same tick as `raw` once the client is ready; before, discord.js queues it
 * until ClientReady and then hands queued packets over one per `setImmediate`.
 */
async function handedToDiscordJs(client: Client, packet: RawPacket): Promise<void> {
  if (!client.isReady()) await new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  // Not in discord.js's typings: absent in another version, then the tick below is all it takes.
  const queue = (client.ws as unknown as { packetQueue?: Array<{ packet: unknown }> }).packetQueue;
  await Promise.resolve();
  while (queue?.some((item) => item.packet === packet)) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * For every edit or deletion on a client's own connection (its `raw` event), the promise of its
 * handling, handed to `track` with its shard and sequence: the recorded sequence waits for it
 * (gateway-sessions.ts), so a crash before an edit or a deletion reached Redis leaves it to be
 * replayed. Every handler of these events (message-edit.ts through discord.js's messageUpdate,
 * uncached-channel-edit.ts, place-events.ts) runs in the channel's serial: the event is handled
 * once what its channel had queued when discord.js handed it over settled. A handling that
 * failed counts as settled, as a create's does.
 */
export function createChangeSettled(options: {
  serial: KeyedSerial;
  track: (shardId: number, s: number, done: Promise<void>) => void;
}): (packet: RawPacket, shardId: number, client: Client) => void {
  const { serial, track } = options;
  return function onPacket(packet, shardId, client) {
    if (packet.op !== 0 || typeof packet.s !== 'number' || !TRACKED_CHANGES.has(packet.t ?? '')) return;
    const channelId = (packet.d as { channel_id?: unknown } | undefined)?.channel_id;
    if (typeof channelId !== 'string') return;
    const done = handedToDiscordJs(client, packet).then(() => serial.run(channelId, async () => {}));
    track(shardId, packet.s, done);
  };
}
