import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordEmulator, type DiscordEmulator } from '../emulators/discord/index.js';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const tsx = join(root, 'node_modules/.bin/tsx');
const cli = join(root, 'adapters/discord/register-commands-cli.ts');

let emu: DiscordEmulator;
let cwd: string;
beforeAll(async () => {
  emu = await startDiscordEmulator();
  // An empty working directory: no stray .env is read.
  cwd = await mkdtemp(join(tmpdir(), 'register-commands-'));
});
afterAll(async () => {
  await emu?.close();
  await rm(cwd, { recursive: true, force: true });
});

function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    // Only Discord's settings: no agent service is needed to register commands.
    DISCORD_TOKEN: emu.token,
    DISCORD_API_URL: emu.apiUrl,
    ...extra,
  };
}

describe('npm run register-commands', () => {
  it('registers /agent in the guild when DISCORD_GUILD_ID is set', async () => {
    const { stdout } = await run(tsx, [cli], { cwd, env: env({ DISCORD_GUILD_ID: emu.world.guildId }) });
    expect(stdout).toMatch(/Registered \/agent and "Ask the agent" \(message menu\) .* in guild/);
    expect(emu.store.commands.get(emu.world.guildId)?.map((c) => c.name)).toEqual(['agent', 'Ask the agent']);
    // `contexts` and `integration_types` are for globally-scoped commands only.
    for (const c of emu.store.commands.get(emu.world.guildId) ?? []) {
      expect(c.contexts).toBeUndefined();
      expect(c.integration_types).toBeUndefined();
    }
    expect(emu.calls.some((c) => c.path === '/oauth2/applications/@me')).toBe(true);
  });

  it('registers globally otherwise', async () => {
    const { stdout } = await run(tsx, [cli], { cwd, env: env({}) });
    expect(stdout).toMatch(/globally/);
    expect(emu.store.commands.get('global')?.map((c) => c.name)).toEqual(['agent', 'Ask the agent']);
    expect(emu.store.commands.get('global')?.map((c) => c.contexts)).toEqual([[0], [0, 1]]);
    // Guild installs only: unset, Discord would follow the app's installs, User Install included.
    expect(emu.store.commands.get('global')?.map((c) => c.integration_types)).toEqual([[0], [0]]);
  });

  it('removes its global commands when it registers in a guild (Discord shows both scopes there: two /agent, one stale)', async () => {
    await run(tsx, [cli], { cwd, env: env({}) });
    expect(emu.store.commands.get('global')?.map((c) => c.name)).toEqual(['agent', 'Ask the agent']);
    // Another command of the same application, not the bridge's: left alone.
    emu.store.commands.get('global')?.push({ id: '970000000000000001', name: 'other', type: 1, description: 'not ours' });
    const { stdout } = await run(tsx, [cli], { cwd, env: env({ DISCORD_GUILD_ID: emu.world.guildId }) });
    expect(emu.store.commands.get(emu.world.guildId)?.map((c) => c.name)).toEqual(['agent', 'Ask the agent']);
    expect(emu.store.commands.get('global')?.map((c) => c.name)).toEqual(['other']);
    expect(stdout).toMatch(/global/);
  });

  it('says what is wrong when the token is refused or missing', async () => {
    const refused = await run(tsx, [cli], { cwd, env: env({ DISCORD_TOKEN: 'wrong-token' }) }).catch((e: { code: number; stderr: string }) => e);
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringMatching(/DISCORD_TOKEN was refused/) });
    const missing = await run(tsx, [cli], { cwd, env: env({ DISCORD_TOKEN: '' }) }).catch((e: { code: number; stderr: string }) => e);
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringMatching(/DISCORD_TOKEN is missing/) });
    const wrong = await run(tsx, [cli], { cwd, env: env({ DISCORD_SHARD_COUNT: 'many' }) }).catch((e: { code: number; stderr: string }) => e);
    expect(wrong).toMatchObject({ code: 2, stderr: expect.stringMatching(/DISCORD_SHARD_COUNT/) });
  });

  it('never prints the token, even when the service quotes it in its refusal (a proxy at DISCORD_API_URL echoing the header)', async () => {
    const token = 'canary-register-0123456789abcdef.MTIz.abc';
    const echo = createServer((req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: `401: Unauthorized (got ${req.headers.authorization})`, code: 0 }));
    });
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    try {
      const apiUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
      const refused = await run(tsx, [cli], { cwd, env: env({ DISCORD_TOKEN: token, DISCORD_API_URL: apiUrl }) }).catch((e: { code: number; stderr: string; stdout: string }) => e);
      expect(refused).toMatchObject({ code: 1, stderr: expect.stringMatching(/DISCORD_TOKEN was refused.*Unauthorized/) });
      expect(JSON.stringify(refused)).not.toContain(token);
    } finally {
      echo.close();
    }
  });
});
