import type { RawPacket } from './gateway-sessions.js';

/** The message events a catch-up hands over; any other replayed event is left out (see catch-up.ts). */
export const REPLAYED_MESSAGE_EVENTS: ReadonlySet<string> = new Set(['MESSAGE_CREATE', 'MESSAGE_UPDATE', 'MESSAGE_DELETE', 'MESSAGE_DELETE_BULK']);

interface MessageData {
  id?: unknown;
  ids?: unknown;
  content?: unknown;
  edited_timestamp?: unknown;
}

const dataOf = (packet: RawPacket) => (packet.d ?? {}) as MessageData;
const idOf = (packet: RawPacket) => (typeof dataOf(packet).id === 'string' ? (dataOf(packet).id as string) : undefined);

/** An author's edit (as message-edit.ts reads one), not a link unfurled or a pin. */
function isEdit(packet: RawPacket): boolean {
  const d = dataOf(packet);
  return packet.t === 'MESSAGE_UPDATE' && Boolean(d.edited_timestamp) && typeof d.content === 'string';
}

/**
 * The message events of a replay, in the gateway's order, with each message sent in the gap
 * folded into the state it ended the gap in. Handed over one by one, a question and its edit
 * (or deletion) are stored a moment apart, and a worker may start its agent call in between:
 * the agent would get the text from before the edit (a password taken out) or a deleted
 * question, billed. So:
 * - a MESSAGE_CREATE whose message is deleted later in the replay is left out (its deletion is
 *   kept: the new session may have got and stored the message too);
 * - one edited later in the replay carries its last edit (Discord's MESSAGE_UPDATE of an edit
 *   holds the whole message; fields it lacks are kept from the create), and the updates of a
 *   message created in the replay are left out: folded in, or nothing to apply to.
 * Updates and deletions of messages sent before the gap pass as they came, for the live path.
 */
export function foldReplay(packets: readonly RawPacket[]): RawPacket[] {
  const created = new Set<string>();
  const deleted = new Set<string>();
  const lastEdit = new Map<string, RawPacket>();
  for (const packet of packets) {
    const id = idOf(packet);
    if (packet.t === 'MESSAGE_CREATE' && id) created.add(id);
    else if (packet.t === 'MESSAGE_DELETE' && id) deleted.add(id);
    else if (packet.t === 'MESSAGE_DELETE_BULK') {
      const ids = dataOf(packet).ids;
      if (Array.isArray(ids)) for (const one of ids) if (typeof one === 'string') deleted.add(one);
    } else if (id && isEdit(packet)) lastEdit.set(id, packet);
  }
  const folded: RawPacket[] = [];
  for (const packet of packets) {
    if (!REPLAYED_MESSAGE_EVENTS.has(packet.t ?? '')) continue;
    const id = idOf(packet);
    if (packet.t === 'MESSAGE_CREATE' && id) {
      if (deleted.has(id)) continue;
      const edit = lastEdit.get(id);
      folded.push(edit ? { ...packet, d: { ...(packet.d as object), ...(edit.d as object) } } : packet);
    } else if (packet.t === 'MESSAGE_UPDATE' && id && created.has(id)) {
      continue;
    } else {
      folded.push(packet);
    }
  }
  return folded;
}
