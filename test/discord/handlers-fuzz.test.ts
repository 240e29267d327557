import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTestConfig } from '../support/config.js';
import fc from 'fast-check';
import type { Express } from 'express';
import type { Redis } from 'ioredis';
import { createDiscordAdapter, type DiscordAdapter } from '../../adapters/discord/adapter.js';
import { createDiscordReplyPort } from '../../adapters/discord/reply-port.js';

import { createLogger, SecretRegistry } from '../../src/logger.js';
import type { IncomingMessage } from '../../src/core/message.js';
import type { CommandReply, Commands } from '../../src/commands/types.js';
import type { AdapterContext } from '../../src/core/platform-context.js';
import { LogCapture } from '../support/pipeline.js';
import { startDiscordEmulator, type DiscordEmulator, type EmuChannel } from '../emulators/discord/index.js';
import { until } from './harness.js';

/** The adapter alone (fake ingress and commands, no Redis), fed odd input through the real gateway. */
let emu: DiscordEmulator;
let adapter: DiscordAdapter;
const seen: IncomingMessage[] = [];
const commandCalls: Array<{ name: string; args: unknown[] }> = [];
const logs = new LogCapture();

const ok = (title: string, ...lines: string[]): CommandReply => ({ ok: true, title, lines });
function fakeCommands(): Commands {
  const record =
    (name: string) =>
    async (...args: unknown[]) => {
      commandCalls.push({ name, args });
      return ok(name, `done ${String(args[1] ?? '')}`.slice(0, 300));
    };
  return {
    help: () => ok('help', 'usage'),
    instances: record('instances'),
    bind: record('bind'),
    unbind: record('unbind'),
    status: record('status'),
    credential: record('credential'),
    set: record('set'),
    why: record('why'),
    audit: record('audit'),
    feedback: record('feedback'),
    setup: record('setup'),
    refuse: async (_c, command) => ok('Not allowed', `Only admins can use /agent ${command}.`),
    cachedInstances: async () => [
      { id: 'a/b/../c', name: 'Slashy "quoted"', status: 'running', type: 't' },
      { id: 'x'.repeat(150), name: 'too long to offer', status: 'running', type: 't' },
      { id: 'émoji-🙂', name: 'ümlaut ‮rtl', status: 'stopped', type: 't' },
    ],
  };
}

beforeAll(async () => {
  emu = await startDiscordEmulator();
  const secrets = new SecretRegistry();
  const config = loadTestConfig({ AGENT_API_BASE_URL: 'http://127.0.0.1:9/api/v1', AGENT_API_KEY: 'unused-key', DISCORD_TOKEN: emu.token, DISCORD_API_URL: emu.apiUrl });
  const logger = createLogger({ level: 'debug', registry: secrets, destination: logs });
  const ctx: AdapterContext = {
    config,
    logger,
    secrets,
    ingress: {
      handle: async (m) => {
        seen.push(m);
        return { status: 'dropped', reason: 'not_bound' };
      },
    },
    seen: { first: async () => true, firstHere: () => true, lease: async () => ({ kind: 'taken', lease: { settle: async () => {}, release: async () => {}, stop: () => {} } }), forget: async () => {} },
    commands: fakeCommands(),
    http: {} as Express,
    redis: {} as Redis,
    replyPort: createDiscordReplyPort({ config, logger, redis: {} as Redis }),
    bindings: {} as AdapterContext['bindings'],
    queueInfo: {} as AdapterContext['queueInfo'],
  };
  adapter = createDiscordAdapter(ctx);
  await adapter.start();
});
afterAll(async () => {
  await adapter?.stop();
  await adapter?.stop();
  await emu?.close();
});

const oddText = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 300 }),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.constantFrom('', '   ', '\u202Eevil', 'a\u0300\u0301', '🙂🙃', '<@>', '<@!>', '<@&1>', '@everyone', '\u0000\u0007', 'x'.repeat(10_000)),
);

describe('discord handlers on odd input', () => {
  it('normalises any message into one IncomingMessage (or ignores a system message), never crashing', async () => {
    const w = emu.world;
    const channels: EmuChannel[] = [w.channels.general, w.channels.thread, w.channels.dmBob];
    await fc.assert(
      fc.asyncProperty(oddText, fc.constantFrom(0, 1, 2), fc.boolean(), fc.constantFrom(0, 7, 19, 21), async (text, c, withMention, type) => {
        const channel = channels[c]!;
        const content = withMention ? `<@!${w.bot.id}>${text}<@${w.bot.id}>` : text;
        const before = seen.length;
        const m = emu.sendMessage({ author: w.users.bob, channel, content, type: type === 19 ? undefined : type });
        const system = type !== 0 && type !== 19;
        const barrier = emu.sendMessage({ author: w.users.bob, channel, content: 'barrier' });
        await until(() => seen.some((s) => s.messageId === barrier.id), 'barrier seen', 5_000);
        const got = seen.slice(before).filter((s) => s.messageId === m.id);
        expect(got).toHaveLength(system ? 0 : 1);
        if (system) return;
        const msg = got[0]!;
        expect(msg.text).not.toContain(`<@${w.bot.id}>`);
        expect(msg.text).not.toContain(`<@!${w.bot.id}>`);
        expect(msg.mentionsBot).toBe(withMention);
        expect(msg.isDirect).toBe(channel === w.channels.dmBob);
        expect(msg.bindingChannelId).toBe(channel === w.channels.dmBob ? 'dm' : channel === w.channels.thread ? w.channels.general.id : channel.id);
        expect(msg.reply).toMatchObject({ channelId: channel.id, messageId: m.id });
      }),
      { numRuns: 60 },
    );
  });

  it('answers every interaction exactly once, privately, whatever the options hold', async () => {
    const w = emu.world;
    const subs = fc.constantFrom('help', 'instances', 'bind', 'unbind', 'status', 'credential', 'set', 'why', 'audit', 'nope', '');
    const odd = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 50 }), fc.constantFrom('a/b', '..', '"q"', "'", 'é🙂', ' ', 'y'.repeat(10_000)));
    await fc.assert(
      fc.asyncProperty(subs, odd, odd, fc.constantFrom('alice', 'bob', 'carol'), async (sub, instance, value, who) => {
        const user = w.users[who as 'alice' | 'bob' | 'carol'];
        const i = emu.runCommand({ user, channel: w.channels.general, subcommand: sub, options: { instance, mode: value, setting: 'errors', value } });
        await emu.waitFor(() => i.original?.content || i.responses.some((r) => r.type === 9) || undefined, `answer to ${sub}`, 5_000);
        expect(i.responses.filter((r) => r.kind === 'callback')).toHaveLength(1);
        if (i.original) expect(i.original.flags).toBe(64);
        const a = emu.autocomplete({ user, channel: w.channels.general, subcommand: 'bind', focused: 'instance', options: { instance } });
        const result = await emu.waitFor(() => a.responses.find((r) => r.type === 8), 'autocomplete', 5_000);
        for (const choice of result.data.choices as Array<{ name: string; value: string }>) {
          expect(Array.from(choice.name).length).toBeLessThanOrEqual(100);
          expect(choice.value.length).toBeLessThanOrEqual(100);
        }
      }),
      { numRuns: 60 },
    );
    // Only admins reached a handler; bob was refused every time.
    expect(logs.text).not.toContain('discord interaction failed');
  });

  it('answers a modal submit with missing or odd fields without calling the service', async () => {
    const w = emu.world;
    const before = commandCalls.filter((c) => c.name === 'credential').length;
    const cases: Array<Record<string, string>> = [{}, { key: '', value: 'secret-value-1' }, { key: 'K', value: '   ' }, { other: 'x' }];
    for (const fields of cases) {
      const i = emu.submitModal({ user: w.users.alice, channel: w.channels.general, customId: 'agent:credential:inst', fields });
      expect(await emu.waitFor(() => i.original?.content || undefined, 'modal answer', 5_000)).toMatch(/needed/);
    }
    expect(commandCalls.filter((c) => c.name === 'credential').length).toBe(before);
    expect(logs.text).not.toContain('secret-value-1');
  });
});
