import { EventEmitter } from 'node:events';
import { Events, type Client } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { createChangeSettled } from '../../adapters/discord/change-settled.js';
import { KeyedSerial } from '../../adapters/discord/serial.js';
import type { RawPacket } from '../../adapters/discord/gateway-sessions.js';

/**
 * When an edit's or a deletion's handling counts as settled (adapters/discord/change-settled.ts):
 * after what its handlers queued in its channel, including discord.js's messageUpdate, which
 * discord.js runs only once the client is ready (it queues packets until then).
 */
class FakeClient extends EventEmitter {
  ready = false;
  readonly ws = { packetQueue: [] as Array<{ packet: unknown }> };
  isReady(): boolean {
    return this.ready;
  }
}

const edit = (s: number): RawPacket => ({ op: 0, s, t: 'MESSAGE_UPDATE', d: { id: 'm', channel_id: 'c', content: 'x', edited_timestamp: 'now' } });

function rig() {
  const serial = new KeyedSerial();
  const tracked: Array<{ shardId: number; s: number; settled: boolean }> = [];
  const onPacket = createChangeSettled({
    serial,
    track: (shardId, s, done) => {
      const entry = { shardId, s, settled: false };
      tracked.push(entry);
      void done.then(() => (entry.settled = true));
    },
  });
  return { serial, tracked, onPacket };
}

const ticks = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
};

describe('an edit or a deletion counts as handled', () => {
  it('once the handling discord.js queued right after `raw` (its messageUpdate) settled in the channel', async () => {
    const { serial, tracked, onPacket } = rig();
    const client = new FakeClient();
    client.ready = true;
    let finish!: () => void;
    const packet = edit(7);
    onPacket(packet, 2, client as unknown as Client);
    // discord.js's handler, in the same tick as `raw`: the edit's handling, held.
    void serial.run('c', () => new Promise<void>((r) => (finish = r)));
    await ticks();
    expect(tracked).toEqual([{ shardId: 2, s: 7, settled: false }]);
    finish();
    await ticks();
    expect(tracked[0]!.settled).toBe(true);
  });

  it('before the client is ready, only after discord.js handed the queued packet over', async () => {
    const { serial, tracked, onPacket } = rig();
    const client = new FakeClient();
    const packet = edit(3);
    onPacket(packet, 0, client as unknown as Client);
    client.ws.packetQueue.push({ packet });
    await ticks();
    expect(tracked[0]!.settled).toBe(false);
    client.ready = true;
    client.emit(Events.ClientReady, client);
    await ticks();
    expect(tracked[0]!.settled).toBe(false);
    // discord.js hands the queued packet over (a later setImmediate): its handling is queued then.
    client.ws.packetQueue.shift();
    let finish!: () => void;
    void serial.run('c', () => new Promise<void>((r) => (finish = r)));
    await ticks();
    expect(tracked[0]!.settled).toBe(false);
    finish();
    await ticks();
    expect(tracked[0]!.settled).toBe(true);
  });

  it('tracks deletions too, and nothing else', async () => {
    const { tracked, onPacket } = rig();
    const client = new FakeClient();
    client.ready = true;
    const c = client as unknown as Client;
    onPacket({ op: 0, s: 1, t: 'MESSAGE_DELETE', d: { id: 'm', channel_id: 'c' } }, 0, c);
    onPacket({ op: 0, s: 2, t: 'MESSAGE_DELETE_BULK', d: { ids: ['a', 'b'], channel_id: 'c' } }, 0, c);
    onPacket({ op: 0, s: 3, t: 'MESSAGE_CREATE', d: { id: 'n', channel_id: 'c' } }, 0, c);
    onPacket({ op: 0, s: 4, t: 'TYPING_START', d: { channel_id: 'c' } }, 0, c);
    await ticks();
    expect(tracked).toEqual([
      { shardId: 0, s: 1, settled: true },
      { shardId: 0, s: 2, settled: true },
    ]);
  });
});
