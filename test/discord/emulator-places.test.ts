import { afterEach, describe, expect, it } from 'vitest';
import { startDiscordEmulator, type DiscordEmulator, type EmuChannel, type Json } from '../emulators/discord/index.js';
import { Peer } from './gateway-peer.js';

/** The emulator answers as Discord does where a reply's place changed or went away. */
let emu: DiscordEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

async function post(channel: EmuChannel | string, body: Json): Promise<{ status: number; body: Json }> {
  const id = typeof channel === 'string' ? channel : channel.id;
  const r = await fetch(`${emu!.apiUrl}/v10/channels/${id}/messages`, {
    method: 'POST',
    headers: { authorization: `Bot ${emu!.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json()) as Json };
}

const GUILDS_AND_MESSAGES = (1 << 0) | (1 << 9) | (1 << 12);

describe('Discord emulator: places that change', () => {
  it('refuses a reply to a deleted message with 50035 unless fail_if_not_exists is false', async () => {
    emu = await startDiscordEmulator();
    const general = emu.world.channels.general;
    const m = emu.sendMessage({ author: emu.world.users.alice, channel: general, content: 'soon gone' });
    emu.deleteMessage(m);
    const strict = await post(general, { content: 'reply', message_reference: { message_id: m.id } });
    expect(strict).toMatchObject({ status: 400, body: { code: 50035, errors: { message_reference: { _errors: [{ code: 'REPLIES_UNKNOWN_MESSAGE' }] } } } });
    const lenient = await post(general, { content: 'reply', message_reference: { message_id: m.id, fail_if_not_exists: false } });
    expect(lenient.status).toBe(200);
    expect(lenient.body.message_reference).toBeUndefined();
  });

  it('answers 404 Unknown Channel (10003) in a deleted channel and its threads, 403 Missing Access (50001) in a guild the bot left', async () => {
    emu = await startDiscordEmulator({ extraGuilds: 1 });
    const w = emu.world;
    emu.deleteChannel(w.channels.general);
    expect(await post(w.channels.general, { content: 'x' })).toMatchObject({ status: 404, body: { code: 10003 } });
    expect(await post(w.channels.thread, { content: 'x' })).toMatchObject({ status: 404, body: { code: 10003 } });
    expect((await post(w.channels.bound, { content: 'x' })).status).toBe(200);
    emu.removeBotFromGuild(w.extraGuilds[0]!.id);
    expect(await post(w.extraGuilds[0]!.channel, { content: 'x' })).toMatchObject({ status: 403, body: { code: 50001 } });
  });

  it('unarchives an archived thread on a post, and refuses one in a locked archived thread (50083)', async () => {
    emu = await startDiscordEmulator();
    const thread: EmuChannel = emu.world.channels.boundThread;
    emu.setThreadArchived(thread, { archived: true });
    expect((await post(thread, { content: 'x' })).status).toBe(200);
    expect(thread.archived).toBe(false);
    emu.setThreadArchived(thread, { archived: true, locked: true });
    expect(await post(thread, { content: 'x' })).toMatchObject({ status: 400, body: { code: 50083 } });
  });

  it('refuses a user\'s edit in an archived thread, and lists only active threads (public and private) in GUILD_CREATE', async () => {
    emu = await startDiscordEmulator();
    const w = emu.world;
    const privateThread = emu.createThread(w.channels.general, 'private', { private: true });
    expect(() => emu!.createThread(w.channels.general, 'from a message', { private: true, from: { id: '1' } })).toThrow(/no message/);
    const m = emu.sendMessage({ author: w.users.alice, channel: w.channels.thread, content: 'question' });
    emu.setThreadArchived(w.channels.thread, { archived: true });
    // Discord: users cannot edit messages in an archived thread; a post unarchives it first.
    expect(() => emu!.editMessage(m, 'edited')).toThrow(/archived thread/);
    const gateway = await fetch(`${emu.apiUrl}/v10/gateway/bot`, { headers: { authorization: `Bot ${emu.token}` } }).then((r) => r.json() as Promise<Json>);
    const peer = new Peer(gateway.url);
    await peer.next((p) => p.op === 10, 'HELLO');
    peer.send({ op: 2, d: { token: emu.token, intents: GUILDS_AND_MESSAGES, properties: {} } });
    const guild = (await peer.next((p) => p.t === 'GUILD_CREATE', 'GUILD_CREATE')).d as Json;
    expect((guild.threads as Json[]).map((t) => [t.id, t.type])).toEqual([
      [w.channels.boundThread.id, 11],
      [privateThread.id, 12],
    ]);
    expect((guild.threads as Json[])[1]).toMatchObject({ parent_id: w.channels.general.id, thread_metadata: { archived: false, invitable: true } });
    peer.ws.close();
    emu.setThreadArchived(w.channels.thread, { archived: false });
    expect(emu.editMessage(m, 'edited').content).toBe('edited');
  });

  it('dispatches MESSAGE_DELETE, CHANNEL_DELETE, THREAD_DELETE, THREAD_UPDATE and GUILD_DELETE, and leaves a left guild out of READY', async () => {
    // Two IDENTIFYs back to back: the identify rate limit is not what this checks.
    emu = await startDiscordEmulator({ identifyWindowMs: 0 });
    const w = emu.world;
    const gateway = await fetch(`${emu.apiUrl}/v10/gateway/bot`, { headers: { authorization: `Bot ${emu.token}` } }).then((r) => r.json() as Promise<Json>);
    const peer = new Peer(gateway.url);
    await peer.next((p) => p.op === 10, 'HELLO');
    peer.send({ op: 2, d: { token: emu.token, intents: GUILDS_AND_MESSAGES, properties: {} } });
    await peer.next((p) => p.t === 'GUILD_CREATE', 'GUILD_CREATE');
    const m = emu.sendMessage({ author: w.users.alice, channel: w.channels.bound, content: 'hello' });
    emu.deleteMessage(m);
    expect((await peer.next((p) => p.t === 'MESSAGE_DELETE', 'MESSAGE_DELETE')).d).toEqual({ id: m.id, channel_id: w.channels.bound.id, guild_id: w.guildId });
    emu.setThreadArchived(w.channels.boundThread, { archived: true, locked: true });
    expect((await peer.next((p) => p.t === 'THREAD_UPDATE', 'THREAD_UPDATE')).d).toMatchObject({ id: w.channels.boundThread.id, thread_metadata: { archived: true, locked: true } });
    emu.deleteChannel(w.channels.thread);
    expect((await peer.next((p) => p.t === 'THREAD_DELETE', 'THREAD_DELETE')).d).toEqual({ id: w.channels.thread.id, type: 11, guild_id: w.guildId, parent_id: w.channels.general.id });
    emu.deleteChannel(w.channels.bound);
    expect((await peer.next((p) => p.t === 'CHANNEL_DELETE', 'CHANNEL_DELETE')).d).toMatchObject({ id: w.channels.bound.id, guild_id: w.guildId });
    emu.removeBotFromGuild();
    expect((await peer.next((p) => p.t === 'GUILD_DELETE', 'GUILD_DELETE')).d).toEqual({ id: w.guildId });
    peer.ws.close();
    const again = new Peer(gateway.url);
    await again.next((p) => p.op === 10, 'HELLO');
    again.send({ op: 2, d: { token: emu.token, intents: GUILDS_AND_MESSAGES, properties: {} } });
    expect((await again.next((p) => p.t === 'READY', 'READY')).d.guilds).toEqual([]);
    again.ws.close();
  });
});
