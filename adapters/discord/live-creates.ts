import type { Client } from 'discord.js';
import type { RawPacket } from './gateway-sessions.js';

/** How many live MESSAGE_CREATE IDs are remembered (a catch-up runs within minutes of the start). */
const REMEMBERED = 10_000;

/**
 * The messages this process's client was handed a MESSAGE_CREATE of: on its own connections (its
 * `raw` packets) or by a catch-up ({@link handedOver}: replayed ones fire no `raw`), so a
 * catch-up can tell a replayed message the client already handled from one it only caches.
 *
 * discord.js emits no messageCreate for a MESSAGE_CREATE of a message it caches already. After a
 * hand-over, a question sent while no process held the shard comes only in the catch-up's replay;
 * an edit of it made just after the catch-up's RESUME comes live first, and discord.js caches the
 * message from that update (`Partials.Message`), or a fetch does (uncached-channel-edit.ts). Its
 * replayed create would then be dropped: the question never stored, never answered, and the edit
 * kept for it (src/queue/early-change.ts) never applied.
 */
export class LiveCreates {
  private readonly ids = new Set<string>();

  constructor(private readonly remembered = REMEMBERED) {}

  onPacket(packet: RawPacket): void {
    if (packet.t === 'MESSAGE_CREATE') this.handedOver(packet);
  }

  /** A replayed MESSAGE_CREATE handed to the client (a second replay of it, on a retry, is left to its cache). */
  handedOver(packet: RawPacket): void {
    const id = (packet.d as { id?: unknown } | undefined)?.id;
    if (typeof id !== 'string') return;
    this.ids.add(id);
    if (this.ids.size > this.remembered) this.ids.delete(this.ids.values().next().value!);
  }

  /**
   * Before a replayed MESSAGE_CREATE is handed to discord.js: a message it caches but this process
   * got no create of is taken out of the cache, so discord.js emits messageCreate and the ingress
   * stores it (a repeat is one job: the ingress dedupe).
   */
  uncacheUnseen(client: Client, packet: RawPacket): void {
    const d = (packet.d ?? {}) as { id?: unknown; channel_id?: unknown };
    if (typeof d.id !== 'string' || typeof d.channel_id !== 'string' || this.ids.has(d.id)) return;
    const channel = client.channels.cache.get(d.channel_id);
    if (channel?.isTextBased()) channel.messages.cache.delete(d.id);
  }
}
