import { afterEach, describe, expect, it } from 'vitest';
import { startDiscordEmulator, type DiscordEmulator } from '../emulators/discord/index.js';
import { Peer } from './gateway-peer.js';

/**
 * The emulator's gateway refuses what Discord refuses (checked against Discord's gateway docs and
 * close-code table), so a bridge that breaks a rule fails here and not first in production.
 */
let emu: DiscordEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

const INTENTS = (1 << 0) | (1 << 9) | (1 << 12);

function identify(peer: Peer, token: string, shard: [number, number]) {
  peer.send({ op: 2, d: { token, intents: INTENTS, properties: {}, shard } });
}

describe('the Discord emulator gateway is as strict as Discord', () => {
  it('answers an IDENTIFY of a rate-limit key within 5 s of the last one with op 9 (d: false), starting no session', async () => {
    emu = await startDiscordEmulator({ maxConcurrency: 2 });
    const remaining = emu.sessionStartsRemaining;
    const a = await new Peer(emu.wsUrl).hello();
    identify(a, emu.token, [0, 4]);
    await a.next((p) => p.t === 'READY', 'READY of shard 0');
    // Shard 1 has the other key (1 % 2): allowed in the same window.
    const b = await new Peer(emu.wsUrl).hello();
    identify(b, emu.token, [1, 4]);
    await b.next((p) => p.t === 'READY', 'READY of shard 1');
    // Shard 2 shares shard 0's key (2 % 2 = 0): too soon.
    const c = await new Peer(emu.wsUrl).hello();
    identify(c, emu.token, [2, 4]);
    expect(await c.next((p) => p.op === 9, 'op 9')).toMatchObject({ op: 9, d: false });
    expect(c.received.some((p) => p.t === 'READY')).toBe(false);
    expect(emu.gatewayStats.refusedIdentifies).toEqual([expect.objectContaining({ shard: 2 })]);
    expect(emu.sessionIds(2)).toEqual([]);
    expect(emu.sessionStartsRemaining).toBe(remaining - 2);
    for (const p of [a, b, c]) p.ws.close();
  });

  it('takes the next IDENTIFY of that key once the window has passed', async () => {
    emu = await startDiscordEmulator({ identifyWindowMs: 300 });
    const a = await new Peer(emu.wsUrl).hello();
    identify(a, emu.token, [0, 1]);
    await a.next((p) => p.t === 'READY', 'first READY');
    a.ws.close(1000);
    await new Promise((r) => setTimeout(r, 350));
    const b = await new Peer(emu.wsUrl).hello();
    identify(b, emu.token, [0, 1]);
    await b.next((p) => p.t === 'READY', 'READY after the window');
    b.ws.close();
  });

  it('closes 4012 for a gateway version Discord no longer serves', async () => {
    emu = await startDiscordEmulator();
    const old = new Peer(emu.wsUrl, '?v=6&encoding=json');
    expect(await old.closed()).toBe(4012);
    const current = await new Peer(emu.wsUrl, '?v=9&encoding=json').hello();
    identify(current, emu.token, [0, 1]);
    await current.next((p) => p.t === 'READY', 'READY on v9');
    current.ws.close();
  });

  it('closes 4003 for a payload before IDENTIFY, 4005 for a second IDENTIFY, 4001 for an unknown opcode', async () => {
    emu = await startDiscordEmulator();
    const early = await new Peer(emu.wsUrl).hello();
    // A heartbeat before identifying is fine (discord.js may send its first one first).
    early.send({ op: 1, d: null });
    await early.next((p) => p.op === 11, 'HEARTBEAT_ACK');
    early.send({ op: 3, d: { since: null, activities: [], status: 'online', afk: false } });
    expect(await early.closed()).toBe(4003);

    const twice = await new Peer(emu.wsUrl).hello();
    identify(twice, emu.token, [0, 1]);
    await twice.next((p) => p.t === 'READY', 'READY');
    twice.send({ op: 6, d: { token: emu.token, session_id: 'x', seq: 1 } });
    expect(await twice.closed()).toBe(4005);

    const unknown = await new Peer(emu.wsUrl).hello();
    unknown.send({ op: 42, d: null });
    expect(await unknown.closed()).toBe(4001);
  });

  it('closes 4008 past 120 payloads in 60 s on one connection', async () => {
    emu = await startDiscordEmulator();
    const chatty = await new Peer(emu.wsUrl).hello();
    for (let i = 0; i < 121; i++) chatty.send({ op: 1, d: null });
    expect(await chatty.closed()).toBe(4008);
    expect(emu.gatewayStats.closes).toContain(4008);
  });

  it.each([4007, 4009])('ends the session it closes with %i: a RESUME of it gets op 9 (d: false)', async (code) => {
    emu = await startDiscordEmulator();
    const a = await new Peer(emu.wsUrl).hello();
    identify(a, emu.token, [0, 1]);
    const ready = await a.next((p) => p.t === 'READY', 'READY');
    emu.closeGateway(code);
    expect(await a.closed()).toBe(code);
    const b = await new Peer(ready.d.resume_gateway_url).hello();
    b.send({ op: 6, d: { token: emu.token, session_id: ready.d.session_id, seq: 1 } });
    expect(await b.next((p) => p.op === 9 || p.t === 'RESUMED', 'an answer to RESUME')).toMatchObject({ op: 9, d: false });
    b.ws.close();
  });
});
