import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mention, startDiscordBridge, until, type DiscordHarness } from './harness.js';
import type { Json } from '../emulators/discord/index.js';

let h: DiscordHarness;
beforeAll(async () => {
  h = await startDiscordBridge({ agent: { reply: (_id, message) => `echo: ${message}` } });
});
afterAll(async () => {
  await h?.close();
});

const w = () => h.discord.world;
const ask = (text: string) =>
  h.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: `${mention(h.discord)} ${text}` });
const messageCreateStatuses = () =>
  h.discord.calls.filter((c) => c.method === 'POST' && /^\/channels\/\d+\/messages$/.test(c.path)).map((c) => c.status);

describe('discord adapter under faults', () => {
  it('resumes after the gateway connection drops mid-traffic: nothing lost, nothing answered twice', async () => {
    const identifies = h.discord.gatewayStats.identifies;
    const sent: Json[] = [];
    for (let n = 0; n < 12; n++) {
      sent.push(ask(`resume test ${n}`));
      // Cut the connection twice while replies are in flight; what is sent meanwhile waits for RESUME.
      if (n === 3 || n === 8) {
        h.discord.dropConnection();
        expect(h.discord.gatewayConnected).toBe(false);
      }
    }
    await h.discord.waitFor(() => sent.every((m) => h.discord.repliesTo(m.id).length > 0), 'every message answered', 30_000);
    expect(h.discord.gatewayStats.resumes).toBeGreaterThanOrEqual(1);
    // Some messages were sent while the connection was down: they reached the bot by replay.
    expect(h.discord.gatewayStats.dispatched.some((d) => d.t === 'MESSAGE_CREATE' && !d.sent)).toBe(true);
    expect(h.discord.gatewayStats.identifies).toBe(identifies);
    const asked = h.agent.chatCalls().map((c) => c.message).filter((m) => m.startsWith('resume test'));
    expect(asked).toEqual(sent.map((_, n) => `resume test ${n}`));
    // A barrier after everything: any duplicate would have been posted before its answer.
    const barrier = ask('barrier');
    await h.discord.waitFor(() => h.discord.repliesTo(barrier.id)[0], 'barrier answer');
    for (const m of sent) expect(h.discord.repliesTo(m.id)).toHaveLength(1);
  });

  it('posts once when REST answers a message create with 429 (waited out inside @discordjs/rest)', async () => {
    const before = messageCreateStatuses().length;
    h.discord.failNextMessageCreates(1, { status: 429, retryAfterSeconds: 0.4 });
    const m = ask('rate limited');
    const reply = await h.discord.waitFor(() => h.discord.repliesTo(m.id)[0], 'reply after 429');
    expect(reply.content).toBe('echo: rate limited');
    expect(messageCreateStatuses().slice(before)).toEqual([429, 200]);
    const barrier = ask('after 429');
    await h.discord.waitFor(() => h.discord.repliesTo(barrier.id)[0], 'barrier answer');
    expect(h.discord.repliesTo(m.id)).toHaveLength(1);
    expect(h.agent.chatCalls().filter((c) => c.message === 'rate limited')).toHaveLength(1);
  });

  it('posts once after a 5xx on message create', async () => {
    const before = messageCreateStatuses().length;
    h.discord.failNextMessageCreates(1, { status: 502 });
    const m = ask('server hiccup');
    await h.discord.waitFor(() => h.discord.repliesTo(m.id)[0], 'reply after 502');
    const barrier = ask('after 502');
    await h.discord.waitFor(() => h.discord.repliesTo(barrier.id)[0], 'barrier answer');
    expect(messageCreateStatuses().slice(before).filter((s) => s === 502)).toHaveLength(1);
    expect(h.discord.repliesTo(m.id)).toHaveLength(1);
    expect(h.agent.chatCalls().filter((c) => c.message === 'server hiccup')).toHaveLength(1);
  });

  it('answers the same gateway message once even if Discord delivers it twice', async () => {
    const m = ask('delivered twice');
    await h.discord.waitFor(() => h.discord.repliesTo(m.id)[0], 'first answer');
    h.discord.redeliver(m);
    const barrier = ask('after redelivery');
    await h.discord.waitFor(() => h.discord.repliesTo(barrier.id)[0], 'barrier answer');
    expect(h.discord.repliesTo(m.id)).toHaveLength(1);
    expect(h.agent.chatCalls().filter((c) => c.message === 'delivered twice')).toHaveLength(1);
  });

  it('gives up at once, with a refusal, when the bot lost access to the channel', async () => {
    const channel = w().channels.thread;
    const m = h.discord.sendMessage({ author: w().users.alice, channel, content: `${mention(h.discord)} no access` });
    h.discord.store.noAccess.add(channel.id);
    try {
      await h.discord.waitFor(
        () => h.discord.calls.some((c) => c.method === 'POST' && c.path === `/channels/${channel.id}/messages` && c.status === 403),
        '403 on the thread',
      );
      await until(() => h.logs.text.includes('Missing Access'), 'refusal logged');
      expect(h.discord.repliesTo(m.id)).toHaveLength(0);
    } finally {
      h.discord.store.noAccess.delete(channel.id);
    }
  });

  it('falls back to mention-only when a later IDENTIFY is refused with 4014', async () => {
    expect(h.adapter.mentionOnly).toBe(false);
    h.discord.setAllowMessageContent(false);
    h.discord.invalidateSession();
    await until(() => h.adapter.mentionOnly && h.adapter.client?.isReady(), 'reconnected without the intent');
    expect(h.discord.gatewayStats.closes).toContain(4014);
    expect(h.logs.lines.filter((l) => l.includes('Message Content Intent'))).toHaveLength(1);
    const m = ask('still here?');
    expect((await h.discord.waitFor(() => h.discord.repliesTo(m.id)[0], 'reply in mention-only mode')).content).toBe('echo: still here?');
  });
});
