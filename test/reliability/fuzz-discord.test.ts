import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { commandInteraction, modalSubmitInteraction } from '../emulators/discord/interaction-payloads.js';
import { messageCreateEvent, messageObject } from '../emulators/discord/payloads.js';
import { snowflake } from '../emulators/discord/world.js';
import type { EmuInteraction, EmuUser, Json } from '../emulators/discord/index.js';
import { NASTY, unsafeAgentCalls } from './support/agent-paths.js';
import { sleep, until, watchProcessErrors } from './support/guards.js';
import { startDiscordBridge, type DiscordHarness } from '../discord/harness.js';
import { figures } from './support/ledger.js';

/**
 * Odd MESSAGE_CREATE and INTERACTION_CREATE payloads dispatched through the emulated gateway to
 * the real bridge (discord.js, real Redis, the core worker, the agent emulator): odd content,
 * wrong types, missing parts, unknown references, admin commands with nasty instance IDs and
 * credential keys. Nothing crashes or rejects unhandled, every command interaction is answered
 * once, the bot keeps answering, and no request reaches the agent with an unescaped path.
 */
let d: DiscordHarness;
const guard = watchProcessErrors();
const sentIds = new Set<string>(['demo-helper']);

beforeAll(async () => {
  d = await startDiscordBridge({ session: true, env: { LOG_LEVEL: 'debug' }, agent: { reply: (_id, m) => `echo: ${m.slice(0, 40)}` } });
  for (const id of NASTY.filter((s) => s.trim() && s.length < 300 && s !== '.' && s !== '..')) d.agent.instances.push({ id, name: 'odd', status: 'running', type: 'assistant' });
});
afterAll(async () => {
  guard.stop();
  await d?.close();
});

/** The emulator's gateway and interaction store, for payloads its helpers would not build. */
const gateway = () => (d.discord as unknown as { gateway: { dispatch(t: string, payload: Json): void } }).gateway;
function interact(payload: Json): EmuInteraction {
  const i: EmuInteraction = { id: payload.id, token: payload.token, payload, responses: [], followups: [], createdAt: Date.now(), late: [] };
  d.discord.store.interactions.set(i.id, i);
  gateway().dispatch('INTERACTION_CREATE', payload);
  return i;
}

const odd = fc.oneof(
  fc.constantFrom<unknown>(...NASTY, '', null, 0, -1, 2 ** 60, true, [], {}, [{}], 'x'.repeat(10_000)),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.jsonValue({ maxDepth: 2 }),
);
const oddString = fc.oneof(fc.constantFrom(...NASTY), fc.string({ unit: 'grapheme', maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 60 }));

describe('Discord handlers on odd gateway payloads', () => {
  it('MESSAGE_CREATE with odd values of the right types: no error anywhere, the bot keeps answering', async () => {
    const mark = guard.errors.length;
    const w = d.discord.world;
    const channels = [w.channels.general, w.channels.thread, w.channels.dmBob, w.channels.bound];
    await d.bridge.bindings.set('discord', w.channels.bound.id, { instanceId: 'demo-helper', mode: 'all', errorPolicy: 'reply', context: 'off', source: 'admin' });
    const people = [w.users.alice, w.users.bob, w.users.otherBot, w.bot];
    const cases = fc.sample(
      fc.record({
        channel: fc.nat({ max: channels.length - 1 }),
        author: fc.nat({ max: people.length - 1 }),
        mention: fc.boolean(),
        text: oddString,
        type: fc.constantFrom(0, 0, 0, 19, 7, 6, 18, 20, 21, 46, 63),
        flags: fc.constantFrom(0, 2, 4, 64, 4096, 32768),
        replyTo: fc.constantFrom(undefined, '1', '999999999999999999', 'not-a-snowflake'),
        attachments: fc.nat({ max: 3 }),
        webhook: fc.boolean(),
        nonce: fc.oneof(fc.constant(undefined), fc.string({ maxLength: 25 }), fc.integer()),
      }),
      { numRuns: 250, seed: 5505 },
    );
    const fromBots: string[] = [];
    const all: string[] = [];
    for (const [n, c] of cases.entries()) {
      const channel = channels[c.channel]!;
      const author = people[c.author]!;
      const content = c.mention ? `<@${w.bot.id}> ${c.text}` : c.text;
      const message = messageObject({
        id: snowflake(),
        channel,
        author,
        content,
        world: w,
        mentions: c.mention ? [w.bot] : [],
        type: c.type,
        ...(c.replyTo ? { reference: { type: 0, message_id: c.replyTo, channel_id: channel.id }, referenced: null } : {}),
        attachments: Array.from({ length: c.attachments }, (_, k) => ({ id: snowflake(), filename: `f${k}.bin`, size: k, url: 'https://cdn.example/f', proxy_url: 'https://cdn.example/f' })),
        ...(c.webhook ? { webhookId: snowflake() } : {}),
        ...(c.nonce !== undefined ? { nonce: String(c.nonce) } : {}),
      });
      message.flags = c.flags;
      all.push(message.id as string);
      if ((author as EmuUser).bot || c.webhook) fromBots.push(message.id as string);
      d.discord.store.addMessage(channel.id, message);
      gateway().dispatch('MESSAGE_CREATE', messageCreateEvent(message, channel, author));
      if (n % 25 === 24) await sleep(50);
    }
    // A sentinel per channel: each channel's earlier messages were handled before it.
    for (const channel of channels) {
      const author = channel === w.channels.dmBob ? w.users.bob : w.users.alice;
      const sentinel = d.discord.sendMessage({ author, channel, content: `<@${w.bot.id}> sentinel after odd messages` });
      const reply = await d.discord.waitFor(() => d.discord.repliesTo(sentinel.id)[0], 'sentinel answered', 30_000);
      expect(reply.content).toContain('sentinel after odd messages');
    }
    await until(async () => (await d.bridge.queue.counts()).active === 0, 'queue idle', 10_000);
    const failures = d.logs.lines.filter((l) => /message handling failed/.test(l));
    const answered = all.filter((id) => d.discord.repliesTo(id).some((m) => String(m.content).startsWith('echo:')));
    figures('fuzz-discord-messages', { dispatched: cases.length, answered: answered.length, agentCalls: d.agent.chatCalls().length, handlingFailures: failures.length });
    expect(failures).toEqual([]);
    for (const id of all) {
      // One answer at most, plus at most one notice (attachments not forwarded, empty message...).
      expect(d.discord.repliesTo(id).filter((m) => String(m.content).startsWith('echo:')).length).toBeLessThanOrEqual(1);
      expect(d.discord.repliesTo(id).length).toBeLessThanOrEqual(2);
    }
    for (const id of fromBots) expect(d.discord.repliesTo(id)).toEqual([]);
    expect(guard.errors.slice(mark)).toEqual([]);
  }, 90_000);

  it('messages with empty, whitespace-only, huge, control, RTL, emoji and combining text: one clear answer each', async () => {
    const mark = guard.errors.length;
    const w = d.discord.world;
    const texts = ['', '   ', '\t\n ', '\u0000\u0007', 'x'.repeat(1_990), 'y'.repeat(8_001), '\u202Eevil\u202C', 'עברית ومرحبا', '👨‍👩‍👧🙂', 'a\u0300\u0301\u0302', '```', '@everyone @here <@&900000000000000050>', ...NASTY.slice(0, 12)];
    const sent = texts.map((text) => ({ text, m: d.discord.sendMessage({ author: w.users.alice, channel: w.channels.general, content: `<@${w.bot.id}> ${text}` }) }));
    await d.discord.waitFor(() => sent.every((x) => d.discord.repliesTo(x.m.id as string).length > 0), 'every odd message answered', 30_000);
    await sleep(800);
    const kinds = sent.map((x) => {
      const t = String(d.discord.repliesTo(x.m.id as string)[0]?.content ?? '');
      return t.startsWith('echo:') ? 'reply' : /characters long/.test(t) ? 'too long' : /Mention me with a question/.test(t) ? 'hint' : `other: ${t.slice(0, 60)}`;
    });
    figures('fuzz-discord-chat-text', { messages: sent.length, kinds: kinds.reduce<Record<string, number>>((acc, k) => ((acc[k] = (acc[k] ?? 0) + 1), acc), {}) });
    for (const [i, x] of sent.entries()) {
      expect(d.discord.repliesTo(x.m.id as string), JSON.stringify(x.text.slice(0, 40))).toHaveLength(1);
      expect(kinds[i]).not.toMatch(/^other/);
    }
    expect(kinds[texts.indexOf('y'.repeat(8_001))]).toBe('too long');
    expect(kinds[texts.indexOf('   ')]).toBe('hint');
    // Nothing the bot sent could ping anyone.
    const creates = d.discord.calls.filter((c) => c.method === 'POST' && /^\/channels\/\d+\/messages$/.test(c.path));
    for (const c of creates) expect(c.json?.allowed_mentions?.parse).toEqual([]);
    expect(guard.errors.slice(mark)).toEqual([]);
  }, 60_000);

  it('MESSAGE_CREATE with wrong types (embeds a string, attachments a number...): only discord.js itself chokes; the adapter never throws and the bot keeps answering', async () => {
    const mark = guard.errors.length;
    const w = d.discord.world;
    const field = fc.constantFrom('content', 'mentions', 'type', 'message_reference', 'referenced_message', 'attachments', 'flags', 'member', 'webhook_id', 'author.bot', 'author.username', 'mention_roles', 'sticker_items', 'embeds', 'channel_type', 'nonce');
    const cases = fc.sample(fc.record({ text: oddString, mutations: fc.array(fc.tuple(field, odd), { minLength: 1, maxLength: 3 }) }), { numRuns: 150, seed: 5506 });
    for (const [n, c] of cases.entries()) {
      const channel = w.channels.general;
      const base = messageCreateEvent(messageObject({ id: snowflake(), channel, author: w.users.bob, content: `<@${w.bot.id}> ${c.text}`, world: w, mentions: [w.bot] }), channel, w.users.bob);
      for (const [path, value] of c.mutations) {
        if (path === 'author.bot') base.author = { ...base.author, bot: value };
        else if (path === 'author.username') base.author = { ...base.author, username: value };
        else base[path] = value;
      }
      gateway().dispatch('MESSAGE_CREATE', base);
      if (n % 25 === 24) await sleep(50);
    }
    const sentinel = d.discord.sendMessage({ author: w.users.alice, channel: w.channels.general, content: `<@${w.bot.id}> sentinel after broken messages` });
    await d.discord.waitFor(() => d.discord.repliesTo(sentinel.id)[0], 'sentinel answered', 30_000);
    const errors = guard.errors.slice(mark);
    // A stack frame of ours (adapters/ or src/) in any of them would be a bug in the bridge.
    const ours = errors.filter((e) => /\/work\/main\/(adapters|src)\//.test(e));
    figures('fuzz-discord-wrong-types', { dispatched: cases.length, rejectionsInsideDiscordJs: errors.length - ours.length, rejectionsInBridgeCode: ours.length, gatewayConnected: d.discord.gatewayConnected });
    expect(ours).toEqual([]);
    expect(errors.every((e) => /node_modules\/(discord\.js|@discordjs)/.test(e))).toBe(true);
    expect(d.discord.gatewayConnected).toBe(true);
  }, 90_000);

  it('INTERACTION_CREATE: /agent with nasty options, odd option types, and broken payloads, answered once each', async () => {
    const w = d.discord.world;
    const users = [w.users.alice, w.users.bob, w.users.carol];
    const sub = fc.constantFrom('help', 'instances', 'bind', 'unbind', 'status', 'credential', 'set', 'why', 'audit', 'nope', '');
    const cases = fc.sample(
      fc.record({ user: fc.nat({ max: 2 }), sub, instance: oddString, mode: oddString, setting: oddString, value: oddString }),
      { numRuns: 150, seed: 6606 },
    );
    const mark = guard.errors.length;
    const answered: EmuInteraction[] = [];
    for (const c of cases) {
      const user = users[c.user]!;
      if (c.sub === 'bind' || c.sub === 'credential') sentIds.add(c.instance.trim());
      answered.push(d.discord.runCommand({ user, channel: w.channels.general, subcommand: c.sub, options: { instance: c.instance, mode: c.mode, setting: c.setting, value: c.value } }));
      if (answered.length % 10 === 0) await sleep(100);
    }
    await until(() => answered.every((i) => i.original?.content || i.responses.some((r) => r.type === 9)), 'every command answered', 45_000, 100);
    expect(guard.errors.slice(mark)).toEqual([]);
    // Wrong types and missing parts: each must be answered or ignored; discord.js may choke on some itself.
    const brokenMark = guard.errors.length;
    const broken = fc.sample(fc.tuple(fc.constantFrom('data.options', 'member', 'data', 'data.name', 'channel', 'member.permissions', 'options.value'), odd), { numRuns: 60, seed: 7707 });
    const brokenSent: EmuInteraction[] = [];
    for (const [path, value] of broken) {
      const payload = commandInteraction(w, { user: w.users.alice, channel: w.channels.general, commandId: '950000000000000001', subcommand: 'bind', options: { instance: 'demo-helper' } });
      if (path === 'data.options') payload.data.options = value;
      else if (path === 'data.name') payload.data.name = value;
      else if (path === 'member.permissions') payload.member = { ...payload.member, permissions: value };
      else if (path === 'options.value') payload.data.options[0].options[0].value = value;
      else payload[path] = value;
      brokenSent.push(interact(payload));
    }
    await sleep(1_500);
    const callbacks = answered.map((i) => i.responses.filter((r) => r.kind === 'callback').length);
    const brokenAnswered = brokenSent.filter((i) => i.responses.length > 0).length;
    figures('fuzz-discord-interactions', { commands: answered.length, broken: brokenSent.length, brokenAnswered, maxCallbacks: Math.max(...callbacks) });
    expect(callbacks.every((n) => n === 1)).toBe(true);
    for (const i of [...answered, ...brokenSent]) {
      expect(i.responses.filter((r) => r.kind === 'callback').length).toBeLessThanOrEqual(1);
      if (i.original) expect(i.original.flags).toBe(64);
    }
    const ours = guard.errors.slice(brokenMark).filter((e) => /\/work\/main\/(adapters|src)\//.test(e));
    expect(ours).toEqual([]);
  }, 90_000);

  it('credential modals submitted with nasty instance IDs, keys and values: answered, escaped, value kept secret', async () => {
    const w = d.discord.world;
    const cases = fc.sample(
      fc.record({
        id: fc.oneof(fc.constantFrom(...NASTY), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 })),
        key: fc.oneof(fc.constantFrom('GOOD_KEY', 'a.b-c_d', ...NASTY), fc.string({ maxLength: 40 })),
        value: fc.uuid().map((u) => `dz-${u}-value`),
        user: fc.constantFrom('alice', 'bob', 'carol'),
      }),
      { numRuns: 100, seed: 8808 },
    );
    const mark = guard.errors.length;
    const sent: EmuInteraction[] = [];
    for (const c of cases) {
      // custom_id holds at most 100 characters, as Discord enforces.
      const customId = `agent:credential:${c.id}`.slice(0, 100);
      sentIds.add(customId.slice('agent:credential:'.length).trim());
      const payload = modalSubmitInteraction(w, { user: w.users[c.user as 'alice'], channel: w.channels.general, customId, fields: { key: c.key, value: c.value } });
      sent.push(interact(payload));
      if (sent.length % 10 === 0) await sleep(100);
    }
    await until(() => sent.every((i) => i.original?.content), 'every modal answered', 45_000, 100);
    await sleep(500);
    const reached = d.agent.calls.filter((c) => c.endpoint === 'credentials').length;
    figures('fuzz-discord-credentials', { submissions: sent.length, reachedService: reached });
    expect(reached).toBeGreaterThan(0);
    for (const c of cases) {
      expect(d.logs.text).not.toContain(c.value);
      for (const call of d.discord.calls) expect(call.body).not.toContain(c.value);
    }
    for (const i of sent) expect(i.original!.flags).toBe(64);
    expect(unsafeAgentCalls(d.agent.calls, sentIds)).toEqual([]);
    expect(guard.errors.slice(mark)).toEqual([]);
  }, 90_000);
});
