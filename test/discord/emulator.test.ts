import { afterEach, describe, expect, it } from 'vitest';
import { startDiscordEmulator, type DiscordEmulator, type Json } from '../emulators/discord/index.js';
import { Peer } from './gateway-peer.js';

/** The emulator's own protocol, checked with a bare WebSocket (what discord.js relies on). */
let emu: DiscordEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

const GUILDS_AND_MESSAGES = (1 << 0) | (1 << 9) | (1 << 12);

describe('Discord emulator protocol', () => {
  it('speaks HELLO, IDENTIFY → READY + GUILD_CREATE, heartbeat ACK, and RESUME with replay', async () => {
    emu = await startDiscordEmulator({ heartbeatIntervalMs: 1234 });
    const gateway = await fetch(`${emu.apiUrl}/v10/gateway/bot`, { headers: { authorization: `Bot ${emu.token}` } }).then((r) => r.json() as Promise<Json>);
    expect(gateway).toMatchObject({ url: emu.wsUrl, shards: 1 });
    const a = new Peer(gateway.url);
    expect((await a.next((p) => p.op === 10, 'HELLO')).d).toEqual({ heartbeat_interval: 1234 });
    a.send({ op: 2, d: { token: emu.token, intents: GUILDS_AND_MESSAGES, properties: {} } });
    const ready = await a.next((p) => p.t === 'READY', 'READY');
    expect(ready).toMatchObject({ s: 1, d: { session_id: expect.any(String), resume_gateway_url: `${emu.wsUrl}/resume`, guilds: [{ unavailable: true }] } });
    expect(await a.next((p) => p.t === 'GUILD_CREATE', 'GUILD_CREATE')).toMatchObject({ s: 2, d: { id: emu.world.guildId } });
    a.send({ op: 1, d: 2 });
    await a.next((p) => p.op === 11, 'HEARTBEAT_ACK');

    emu.dropConnection();
    const missed = emu.sendMessage({ author: emu.world.users.bob, channel: emu.world.channels.general, content: 'while away' });
    const b = new Peer(ready.d.resume_gateway_url);
    await b.next((p) => p.op === 10, 'HELLO');
    b.send({ op: 6, d: { token: emu.token, session_id: ready.d.session_id, seq: 2 } });
    const replayed = await b.next((p) => p.t === 'MESSAGE_CREATE', 'replayed MESSAGE_CREATE');
    expect(replayed).toMatchObject({ s: 3, d: { id: missed.id, content: '', channel_type: 0, guild_id: emu.world.guildId } });
    expect(await b.next((p) => p.t === 'RESUMED', 'RESUMED')).toMatchObject({ s: 4 });
    b.ws.close();
  });

  it('keeps a session resumable from a new connection after a 4xxx close, ends it on 1000, expires it after the window', async () => {
    // Two IDENTIFYs back to back: the identify rate limit is not what this checks.
    emu = await startDiscordEmulator({ resumeWindowMs: 300, identifyWindowMs: 0 });
    const general = emu.world.channels.general;
    const identify = async () => {
      const p = new Peer(emu!.wsUrl);
      await p.next((x) => x.op === 10, 'HELLO');
      p.send({ op: 2, d: { token: emu!.token, intents: GUILDS_AND_MESSAGES, properties: {} } });
      return { peer: p, ready: await p.next((x) => x.t === 'READY', 'READY') };
    };
    const closed = async (p: Peer, code: number) => {
      p.ws.close(code);
      for (let i = 0; i < 100 && p.closeCode === undefined; i++) await new Promise((r) => setTimeout(r, 10));
    };
    const resume = async (sessionId: string, seq: number) => {
      const p = new Peer(emu!.wsUrl);
      await p.next((x) => x.op === 10, 'HELLO');
      p.send({ op: 6, d: { token: emu!.token, session_id: sessionId, seq } });
      return { peer: p, answer: await p.next((x) => x.t === 'RESUMED' || x.op === 9, 'RESUMED or INVALID_SESSION') };
    };

    // A process restarting: it closes with a 4xxx code, a second session of the same shard starts,
    // and the old one, resumed on another connection, replays what came meanwhile.
    const first = await identify();
    await closed(first.peer, 4200);
    const missed = emu.sendMessage({ author: emu.world.users.bob, channel: general, content: 'while restarting' });
    const second = await identify();
    const both = emu.sendMessage({ author: emu.world.users.bob, channel: general, content: 'after the new session' });
    await second.peer.next((x) => x.t === 'MESSAGE_CREATE' && x.d.id === both.id, 'live MESSAGE_CREATE on the new session');
    expect(emu.sessionIds(0)).toEqual([first.ready.d.session_id, second.ready.d.session_id]);
    const back = await resume(first.ready.d.session_id, 2);
    expect(back.answer.t).toBe('RESUMED');
    expect(back.peer.received.filter((x) => x.t === 'MESSAGE_CREATE').map((x) => x.d.id)).toEqual([missed.id, both.id]);

    // Closed with 1000: over, as on Discord.
    await closed(back.peer, 1000);
    expect((await resume(first.ready.d.session_id, 2)).answer).toMatchObject({ op: 9, d: false });
    // Dropped and not resumed within the window: expired.
    emu.dropConnection();
    await new Promise((r) => setTimeout(r, 400));
    expect((await resume(second.ready.d.session_id, 2)).answer).toMatchObject({ op: 9, d: false });
    expect((await resume('no-such-session', 0)).answer).toMatchObject({ op: 9, d: false });
    expect(emu.gatewayStats.refusedResumes).toBe(3);
  });

  it('closes with 4014 when the Message Content intent is not allowed, and 4004 for a bad token', async () => {
    emu = await startDiscordEmulator({ allowMessageContent: false });
    const a = new Peer(emu.wsUrl);
    await a.next((p) => p.op === 10, 'HELLO');
    a.send({ op: 2, d: { token: emu.token, intents: GUILDS_AND_MESSAGES | (1 << 15), properties: {} } });
    for (let i = 0; i < 100 && a.closeCode === undefined; i++) await new Promise((r) => setTimeout(r, 20));
    expect(a.closeCode).toBe(4014);
    const b = new Peer(emu.wsUrl);
    await b.next((p) => p.op === 10, 'HELLO');
    b.send({ op: 2, d: { token: 'wrong', intents: 1, properties: {} } });
    for (let i = 0; i < 100 && b.closeCode === undefined; i++) await new Promise((r) => setTimeout(r, 20));
    expect(b.closeCode).toBe(4004);
  });

  it('checks Authorization where Discord does, decodes paths, and refuses > 2000 characters', async () => {
    emu = await startDiscordEmulator();
    const api = `${emu.apiUrl}/v10`;
    expect((await fetch(`${api}/users/%40me`)).status).toBe(401);
    const me = await fetch(`${api}/users/%40me`, { headers: { authorization: `Bot ${emu.token}` } });
    expect(me.status).toBe(200);
    const post = (content: string) =>
      fetch(`${api}/channels/${emu!.world.channels.general.id}/messages`, {
        method: 'POST',
        headers: { authorization: `Bot ${emu!.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ content }),
      });
    const tooLong = await post('x'.repeat(2001));
    expect(tooLong.status).toBe(400);
    expect(await tooLong.json()).toMatchObject({ code: 50035 });
    emu.failNextMessageCreates(1, { status: 429, retryAfterSeconds: 2.5 });
    const limited = await post('hi');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    expect(await limited.json()).toEqual({ message: 'You are being rate limited.', retry_after: 2.5, global: false });
    expect((await post('hi')).status).toBe(200);
  });

  it('bulk-deletes as Discord does: 2 to 100 IDs, none over 2 weeks old, not in a DM; then gone', async () => {
    emu = await startDiscordEmulator();
    const w = emu.world;
    const bulk = (channelId: string, ids: string[]) =>
      fetch(`${emu!.apiUrl}/v10/channels/${channelId}/messages/bulk-delete`, {
        method: 'POST',
        headers: { authorization: `Bot ${emu!.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ messages: ids }),
      });
    const a = emu.sendMessage({ author: w.users.alice, channel: w.channels.general, content: 'one' });
    const b = emu.sendMessage({ author: w.users.bob, channel: w.channels.general, content: 'two' });
    expect((await bulk(w.channels.general.id, [String(a.id)])).status).toBe(400);
    // A snowflake of 15 days ago (Discord's epoch, 22 bits of counter).
    const old = ((BigInt(Date.now() - 15 * 86_400_000) - 1_420_070_400_000n) << 22n).toString();
    const tooOld = await bulk(w.channels.general.id, [String(a.id), old]);
    expect(tooOld.status).toBe(400);
    expect(await tooOld.json()).toMatchObject({ code: 50034 });
    expect((await bulk(w.channels.dmAlice.id, [String(a.id), String(b.id)])).status).toBe(403);
    expect((await bulk(w.channels.general.id, [String(a.id), String(b.id)])).status).toBe(204);
    // Its MESSAGE_DELETE_BULK: see catch-up-edits.test.ts (replayed to the next process).
    const read = await fetch(`${emu.apiUrl}/v10/channels/${w.channels.general.id}/messages/${String(a.id)}`, { headers: { authorization: `Bot ${emu.token}` } });
    expect(read.status).toBe(404);
  });
});
