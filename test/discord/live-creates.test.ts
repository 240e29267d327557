import { Client, type Channel } from 'discord.js';
import { afterAll, describe, expect, it } from 'vitest';
import type { RawPacket } from '../../adapters/discord/gateway-sessions.js';
import { LiveCreates } from '../../adapters/discord/live-creates.js';

/**
 * A replayed MESSAGE_CREATE of a message discord.js caches only from a live update (or a fetch)
 * is taken out of its cache first, so discord.js emits messageCreate for it; one the client was
 * handed a create of (live or replayed) is left to the cache, which drops the repeat.
 */
const client = new Client({ intents: [] });
afterAll(() => client.destroy());
const CHANNEL = '930000000000000001';
const cached = new Map<string, unknown>();
client.channels.cache.set(CHANNEL, { isTextBased: () => true, messages: { cache: cached } } as unknown as Channel);
const create = (id: string): RawPacket => ({ op: 0, t: 'MESSAGE_CREATE', d: { id, channel_id: CHANNEL } });

describe('LiveCreates', () => {
  it('uncaches a replayed message it got no create of, and no other', () => {
    const live = new LiveCreates();
    for (const id of ['1', '2', '3']) cached.set(id, {});
    live.onPacket(create('1'));
    live.handedOver(create('2'));
    for (const id of ['1', '2', '3']) live.uncacheUnseen(client, create(id));
    expect([...cached.keys()]).toEqual(['1', '2']);
  });

  it('remembers only the newest', () => {
    const live = new LiveCreates(2);
    for (const id of ['a', 'b', 'c']) live.onPacket(create(id));
    for (const id of ['a', 'b', 'c']) cached.set(id, {});
    for (const id of ['a', 'b', 'c']) live.uncacheUnseen(client, create(id));
    expect(['a', 'b', 'c'].filter((id) => cached.has(id))).toEqual(['b', 'c']);
  });
});
