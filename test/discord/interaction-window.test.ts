import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordEmulator, type DiscordEmulator } from '../emulators/discord/index.js';
import { startRedisStallProxy, type RedisStallProxy } from '../support/redis-stall-proxy.js';
import { startDiscordBridge, until, type DiscordHarness } from './harness.js';

/**
 * Discord takes an interaction's first answer within 3 seconds only: later, its callback gets 404
 * (10062 Unknown interaction) and the user reads "The application did not respond". The emulator
 * holds to that window now; here, what the bridge must answer within it while Redis is slow.
 */
describe('the emulator holds to Discord\'s interaction windows', () => {
  let emu: DiscordEmulator;
  beforeAll(async () => {
    emu = await startDiscordEmulator({ interactionAckMs: 200, interactionTokenMs: 400 });
  });
  afterAll(async () => emu?.close());

  it('refuses a callback after the ack window (10062) and an edit after the token lifetime (50027)', async () => {
    const w = emu.world;
    const i = emu.runCommand({ user: w.users.alice, channel: w.channels.general, subcommand: 'help' });
    await new Promise((r) => setTimeout(r, 250));
    const callback = await fetch(`${emu.apiUrl}/v10/interactions/${i.id}/${i.token}/callback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 5, data: { flags: 64 } }),
    });
    expect(callback.status).toBe(404);
    expect(((await callback.json()) as { code: number }).code).toBe(10062);

    const j = emu.runCommand({ user: w.users.alice, channel: w.channels.general, subcommand: 'help' });
    const acked = await fetch(`${emu.apiUrl}/v10/interactions/${j.id}/${j.token}/callback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 5, data: { flags: 64 } }),
    });
    expect(acked.status).toBe(204);
    await new Promise((r) => setTimeout(r, 450));
    const edit = await fetch(`${emu.apiUrl}/v10/webhooks/${w.applicationId}/${j.token}/messages/@original`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'too late' }),
    });
    expect(edit.status).toBe(401);
    expect(((await edit.json()) as { code: number }).code).toBe(50027);
    expect(i.late).toEqual([{ kind: 'callback', type: 5 }]);
    expect(j.late).toEqual([{ kind: 'webhook' }]);
  });
});

describe('/agent credential while Redis is slow (per-workspace accounts)', () => {
  const GUILD_KEY = `guild-key-${randomUUID()}`;
  let h: DiscordHarness;
  let proxy: RedisStallProxy;
  beforeAll(async () => {
    proxy = await startRedisStallProxy();
    h = await startDiscordBridge({
      env: { REDIS_URL: proxy.url, AGENT_ACCOUNT_MODE: 'per-workspace', AGENT_API_KEY: '', INSTALLATION_ENCRYPTION_KEY: randomBytes(32).toString('base64') },
      agent: { otherAccounts: [{ apiKey: GUILD_KEY, instances: [{ id: 'demo-helper', name: 'Guild Helper', status: 'running', type: 'chat' }] }] },
    });
  });
  afterAll(async () => {
    proxy?.resume();
    await h?.close();
    await proxy?.close();
  });

  it('opens the form within Discord\'s 3 seconds though the account lookup hangs (audit I)', async () => {
    const w = h.discord.world;
    const submit = h.discord.submitModal({ user: w.users.alice, channel: w.channels.bound, customId: 'agent:setup', fields: { api_key: GUILD_KEY, session: '' } });
    await h.discord.waitFor(() => submit.original?.content?.match(/Saved/), 'the server account saved');

    // The server's account is read from Redis before the form opens; Redis does not answer for 4 s.
    proxy.stall();
    const open = h.discord.runCommand({ user: w.users.alice, channel: w.channels.bound, subcommand: 'credential', options: { instance: 'demo-helper' } });
    await new Promise((r) => setTimeout(r, 4_000));
    proxy.resume();
    await h.discord.waitFor(() => open.responses.length > 0 || open.late.length > 0, 'an answer to the command');
    // Before: the modal came after Redis answered, past the window; the admin read "The application did not respond".
    expect(open.late).toEqual([]);
    expect(open.responses[0]).toMatchObject({ kind: 'callback', type: 9 });
  });
});

describe('an interaction that reaches the bridge after Discord\'s 3 seconds', () => {
  let h: DiscordHarness;
  // Every first answer comes too late, as for an interaction replayed after a long reconnect.
  beforeAll(async () => {
    h = await startDiscordBridge({ emulator: { interactionAckMs: -1 }, env: { LOG_LEVEL: 'info' } });
  });
  afterAll(async () => h?.close());

  it('is logged once, in plain words, and not answered a second time (audit I)', async () => {
    const w = h.discord.world;
    const i = h.discord.runCommand({ user: w.users.alice, channel: w.channels.general, subcommand: 'status' });
    await h.discord.waitFor(() => i.late.length > 0, 'the late answer');
    const late = await until(() => h.logs.matching(/answered too late/)[0], 'the log line');
    expect(late).toMatchObject({ level: 40, interactionId: i.id });
    expect(String(late.msg)).toMatch(/The application did not respond/);
    await new Promise((r) => setTimeout(r, 500));
    // Before: an error with a reference nobody was shown, and a second callback refused in turn.
    expect(i.late).toHaveLength(1);
    expect(h.logs.matching(/discord interaction failed|could not tell the user/)).toEqual([]);
  });
});

describe("a command's answer after its interaction token's 15 minutes", () => {
  let h: DiscordHarness;
  let proxy: RedisStallProxy;
  // 15 minutes made 1 s; Redis stalls for 2 s after the command was deferred.
  beforeAll(async () => {
    proxy = await startRedisStallProxy();
    h = await startDiscordBridge({ emulator: { interactionTokenMs: 1_000 }, env: { REDIS_URL: proxy.url, LOG_LEVEL: 'info' } });
  });
  afterAll(async () => {
    proxy?.resume();
    await h?.close();
    await proxy?.close();
  });

  it('is logged once, in plain words, and not tried again (audit I)', async () => {
    const w = h.discord.world;
    proxy.stall();
    const i = h.discord.runCommand({ user: w.users.alice, channel: w.channels.general, subcommand: 'unbind' });
    await h.discord.waitFor(() => i.responses.some((r) => r.type === 5), 'deferred');
    await new Promise((r) => setTimeout(r, 2_000));
    proxy.resume();
    const late = await until(() => h.logs.matching(/answered after its 15 minutes/)[0], 'the log line');
    expect(late).toMatchObject({ level: 40, interactionId: i.id });
    await new Promise((r) => setTimeout(r, 500));
    // Before: an error with a reference nobody was shown, and a second edit refused in turn.
    expect(i.late).toEqual([{ kind: 'webhook' }]);
    expect(h.logs.matching(/discord interaction failed|could not tell the user/)).toEqual([]);
  });
});
