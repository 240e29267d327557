import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadTestConfig } from '../support/config.js';
import type { Redis } from 'ioredis';
import { createDiscordReplyPort } from '../../adapters/discord/reply-port.js';
import { TypingKeeper } from '../../adapters/discord/typing.js';
import { toPlatformError } from '../../adapters/discord/errors.js';
import { PlatformError } from '../../src/core/errors.js';

import { createLogger } from '../../src/logger.js';
import { LogCapture } from '../support/log-capture.js';
import type { ReplyPort } from '../../src/core/reply-port.js';
import { startDiscordEmulator, type DiscordEmulator } from '../emulators/discord/index.js';

let emu: DiscordEmulator;
beforeAll(async () => {
  emu = await startDiscordEmulator();
});
afterAll(async () => {
  await emu?.close();
});

function port(env: Record<string, string> = {}, apiUrl = emu.apiUrl): ReplyPort {
  const config = loadTestConfig({
    AGENT_API_BASE_URL: 'http://127.0.0.1:9/api/v1',
    AGENT_API_KEY: 'unused-key',
    DISCORD_TOKEN: emu.token,
    DISCORD_API_URL: apiUrl,
    ...env,
  });
  return createDiscordReplyPort({ config, logger: createLogger({ level: 'silent' }), redis: {} as Redis }, { typingRefreshMs: 30 });
}
const creates = (channelId: string) => emu.calls.filter((c) => c.method === 'POST' && c.path === `/channels/${channelId}/messages`);
const userMessage = (channel = emu.world.channels.general) =>
  emu.sendMessage({ author: emu.world.users.alice, channel, content: 'question' });
const targetOf = (m: ReturnType<typeof userMessage>) => ({ channelId: m.channel_id, messageId: m.id });
/** A reply port (`env` on top of the defaults) and Alice's question in #general to answer, with its reply target. */
function asked(env: Record<string, string> = {}) {
  const p = port(env);
  const m = userMessage();
  return { p, m, target: targetOf(m) };
}

describe('discord reply port (REST only, against the emulator)', () => {
  it('replies to the user on the first chunk only; no mentions parsed on any', async () => {
    const { p, m, target } = asked();
    await p.postChunk(target, 'first @everyone', 0);
    await p.postChunk(target, 'second <@920000000000000002>', 1);
    const [a, b] = creates(m.channel_id).slice(-2).map((c) => c.json!);
    expect(a).toMatchObject({ allowed_mentions: { parse: [], replied_user: false }, message_reference: { message_id: m.id, fail_if_not_exists: false }, enforce_nonce: true });
    expect(b!.message_reference).toBeUndefined();
    expect(b!.allowed_mentions).toEqual({ parse: [], replied_user: false });
    const posted = emu.repliesTo(m.id);
    expect(posted).toHaveLength(1);
    expect(posted[0]!.mention_everyone).toBe(false);
  });

  it('pings the replied-to user only when DISCORD_REPLY_PING is on', async () => {
    const { p, m, target } = asked({ DISCORD_REPLY_PING: 'true' });
    await p.postChunk(target, 'hi', 0);
    expect(creates(m.channel_id).at(-1)!.json!.allowed_mentions).toEqual({ parse: [], replied_user: true });
    expect(emu.repliesTo(m.id)[0]!.mentions.map((u: { id: string }) => u.id)).toEqual([emu.world.users.alice.id]);
  });

  it('posts a chunk once when the same post is retried (nonce enforced by Discord)', async () => {
    const { p, m, target } = asked();
    await p.postChunk(target, 'same chunk', 0);
    await p.postChunk(target, 'same chunk', 0);
    expect(emu.repliesTo(m.id)).toHaveLength(1);
  });

  it("a chunk retried after Discord's nonce window is found in the channel, not posted again", async () => {
    const { p, m, target } = asked();
    const info = (mayExist: boolean) => ({ messageId: `bridge-${m.id}`, total: 3, mayExist });
    const botPostsAfter = () => emu.botMessages(m.channel_id).filter((x) => BigInt(x.id) > BigInt(m.id)).map((x) => x.content);
    // Other people talk meanwhile: more than one page of 100 after the question.
    for (let i = 0; i < 120; i++) emu.sendMessage({ author: emu.world.users.bob, channel: emu.world.channels.general, content: `chatter ${i}` });
    await p.postChunk(target, 'part one', 0, info(false));
    for (let i = 0; i < 120; i++) emu.sendMessage({ author: emu.world.users.bob, channel: emu.world.channels.general, content: `more ${i}` });
    await p.postChunk(target, '  part two\n', 1, info(false));
    // The workers were down past the window: the nonce no longer drops a repeat.
    emu.setNonceWindow(0);
    try {
      await p.postChunk(target, 'part one', 0, info(true));
      await p.postChunk(target, '  part two\n', 1, info(true));
      expect(botPostsAfter()).toEqual(['part one', 'part two']);
      // A chunk that never went out is posted.
      await p.postChunk(target, 'part three', 2, info(true));
      expect(botPostsAfter()).toEqual(['part one', 'part two', 'part three']);
      // Without the look-up (nothing may exist), a repeat past the window is a second post: what it guards.
      await p.postChunk(target, 'part three', 2, info(false));
      expect(botPostsAfter()).toHaveLength(4);
    } finally {
      emu.setNonceWindow(120_000);
    }
  });

  it('renders within 2000 characters and cuts an over-long notice', async () => {
    const p = port();
    expect(p.render('')).toEqual([]);
    const chunks = p.render(`${'word '.repeat(600)}\n\n\`\`\`\n${'x = 1\n'.repeat(500)}\`\`\``);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.every((c) => c.length <= 2000)).toBe(true);
    const m = userMessage();
    await p.postNotice(targetOf(m), 'n'.repeat(2500));
    expect(emu.repliesTo(m.id)[0]!.content.length).toBe(2000);
  });

  it('maps Missing Access and Unknown Channel to `refused`, 5xx to `server_error`', async () => {
    const p = port();
    emu.store.noAccess.add(emu.world.channels.bound.id);
    const refused = await p.postChunk({ channelId: emu.world.channels.bound.id, messageId: '1' }, 'x', 0).catch((e: unknown) => e);
    emu.store.noAccess.delete(emu.world.channels.bound.id);
    expect(refused).toBeInstanceOf(PlatformError);
    expect(refused).toMatchObject({ kind: 'refused', code: '50001', status: 403, retryable: false });
    const unknown = await p.postChunk({ channelId: '999999999999999999', messageId: '1' }, 'x', 0).catch((e: unknown) => e);
    expect(unknown).toMatchObject({ kind: 'refused', code: '10003' });
    // @discordjs/rest retries a 5xx three times by itself before it throws.
    emu.failNextMessageCreates(4, { status: 500 });
    const failed = await p.postChunk({ channelId: emu.world.channels.general.id, messageId: '1' }, 'x', 0).catch((e: unknown) => e);
    expect(failed).toMatchObject({ kind: 'server_error', status: 500, retryable: true });
    expect(String((failed as Error).message)).not.toContain(emu.token);
  });

  it('maps a connection failure to `network` and never leaks the token', async () => {
    const dead = port({}, 'http://127.0.0.1:1/api');
    const err = await dead.postChunk({ channelId: '1', messageId: '1' }, 'x', 0).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'network', retryable: true });
    expect(toPlatformError(Object.assign(new Error('x'), { name: 'AbortError' }), 'typing').kind).toBe('timeout');
  });

  it('keeps typing until stopped, and adds a warning reaction on failure', async () => {
    const { p, m, target } = asked();
    const typing = () => emu.calls.filter((c) => c.path === `/channels/${m.channel_id}/typing`).length;
    await p.startWorking!(target);
    await emu.waitFor(() => typing() >= 3, 'typing refreshed');
    await p.stopWorking!(target, 'failed');
    expect(emu.calls.some((c) => c.method === 'PUT' && c.path === `/channels/${m.channel_id}/messages/${m.id}/reactions/⚠️/@me`)).toBe(true);
  });

  it('sends no more typing to a channel that refused it (audit I: each is a refused request toward Discord\'s ban)', async () => {
    const p = port();
    const channel = emu.world.channels.bound;
    const typing = () => emu.calls.filter((c) => c.path === `/channels/${channel.id}/typing`);
    emu.setBotMayPost(channel, false);
    try {
      const first = targetOf(userMessage(channel));
      await p.startWorking!(first);
      // Refreshed every 30 ms before: a refused trigger every 8 s for as long as the agent worked.
      await new Promise((r) => setTimeout(r, 300));
      const second = targetOf(userMessage(channel));
      await p.startWorking!(second);
      await new Promise((r) => setTimeout(r, 100));
      await p.stopWorking!(first, 'ok');
      await p.stopWorking!(second, 'ok');
      expect(typing().map((c) => c.status)).toEqual([403]);
      // Other channels are not held back.
      const elsewhere = targetOf(userMessage());
      await p.startWorking!(elsewhere);
      await p.stopWorking!(elsewhere, 'ok');
      expect(emu.calls.filter((c) => c.path === `/channels/${elsewhere.channelId}/typing`).at(-1)?.status).toBe(204);
    } finally {
      emu.setBotMayPost(channel, true);
    }
  });

  it('sends no failure notice, nor ⚠️ without access, where the post was just refused (audit I)', async () => {
    const p = port();
    const channel = emu.world.channels.bound;
    const sent = () => emu.calls.filter((c) => c.path.startsWith(`/channels/${channel.id}/`) && c.method !== 'GET').map((c) => `${c.method} ${c.status}`);
    emu.store.noAccess.add(channel.id);
    try {
      const target = targetOf(userMessage(channel));
      const before = sent().length;
      await expect(p.postChunk(target, 'the answer', 0)).rejects.toMatchObject({ kind: 'refused', code: '50001' });
      // What the worker does when it gives up: a notice where the answer was refused, then ⚠️.
      await expect(p.postNotice(target, 'Something went wrong (ref X)')).rejects.toMatchObject({ kind: 'refused', code: '50001' });
      await p.stopWorking!(target, 'failed');
      // Before: the notice and the reaction were refused too (three refused requests instead of one).
      expect(sent().slice(before)).toEqual(['POST 403']);
    } finally {
      emu.store.noAccess.delete(channel.id);
    }
    // Access back: posts go out again.
    const again = targetOf(userMessage(channel));
    await p.postChunk(again, 'the answer, now', 0);
    await p.postNotice(again, 'a notice');
    expect(sent().slice(-2)).toEqual(['POST 200', 'POST 200']);
  });

  it('does not resend at once after a 429 that says no wait (Cloudflare, a proxy): audit I', async () => {
    const { p, m, target } = asked();
    const before = creates(m.channel_id).length;
    // As many as a tight loop would meet before the next message create succeeds.
    emu.failNextMessageCreates(25, { status: 429, edge: true });
    try {
      const outcome = await Promise.race([
        p.postChunk(target, 'answer', 0).then(() => 'posted', (e: unknown) => e),
        new Promise((r) => setTimeout(() => r('still retrying'), 3_000)),
      ]);
      // Before: 25 refused requests in under a second (at most 50 a second), then the post.
      expect(creates(m.channel_id).slice(before).map((c) => c.status)).toEqual([429]);
      expect(outcome).toMatchObject({ kind: 'rate_limited', retryAfterMs: 60_000 });
      expect(String((outcome as Error).message)).toMatch(/does not say how long to wait/);
    } finally {
      emu.store.messageCreateFaults.length = 0;
    }
  });

  it('still waits out a 429 that says how long, and posts', async () => {
    const { p, m, target } = asked();
    emu.failNextMessageCreates(1, { status: 429, retryAfterSeconds: 0.2 });
    await p.postChunk(target, 'answer after the wait', 0);
    expect(creates(m.channel_id).slice(-2).map((c) => c.status)).toEqual([429, 200]);
  });

  it('names a channel where the warning reaction is refused, once per 10 minutes, at warn', async () => {
    const logs = new LogCapture();
    const config = loadTestConfig({ AGENT_API_BASE_URL: 'http://127.0.0.1:9/api/v1', AGENT_API_KEY: 'unused-key', DISCORD_TOKEN: emu.token, DISCORD_API_URL: emu.apiUrl });
    const p = createDiscordReplyPort({ config, logger: createLogger({ level: 'debug', destination: logs }), redis: {} as Redis });
    const channel = emu.world.channels.general;
    emu.setBotMayReact(channel, false);
    try {
      for (let n = 0; n < 3; n++) await p.stopWorking!(targetOf(userMessage(channel)), 'failed');
      const refused = emu.calls.filter((c) => c.method === 'PUT' && c.path.startsWith(`/channels/${channel.id}/`) && c.status === 403);
      expect(refused).toHaveLength(3);
      const warned = logs.matching(/could not mark a failed message/);
      expect(warned).toHaveLength(1);
      expect(warned[0]).toMatchObject({ level: 40, channelId: channel.id });
      expect(String(warned[0]!.msg)).toMatch(/Add Reactions and Read Message History.*\/agent set errors reply/);
    } finally {
      emu.setBotMayReact(channel, true);
    }
  });

  it('fetches a thread oldest first, speakers labelled, without the triggering message', async () => {
    const thread = emu.world.channels.thread;
    emu.sendMessage({ author: emu.world.users.alice, channel: thread, content: 'first' });
    emu.sendMessage({ author: emu.world.users.bob, channel: thread, content: 'second' });
    const trigger = emu.sendMessage({ author: emu.world.users.alice, channel: thread, content: 'now' });
    const history = await port().fetchThread!({ channelId: thread.id, threadId: thread.id, messageId: trigger.id }, 10);
    expect(history.slice(-2)).toEqual([
      { author: 'Alice', text: 'first', isBot: false },
      { author: 'Bob', text: 'second', isBot: false },
    ]);
    expect(await port().fetchThread!({ channelId: thread.id, messageId: trigger.id }, 10)).toEqual([]);
  });
});

describe('TypingKeeper', () => {
  it('refreshes until stopped, with unref timers', async () => {
    vi.useFakeTimers();
    try {
      const send = vi.fn(async () => {});
      const keeper = new TypingKeeper(send, { refreshMs: 8_000 });
      await keeper.start('k', 'c');
      await keeper.start('k', 'c');
      expect(send).toHaveBeenCalledTimes(1);
      await vi.advanceTimersByTimeAsync(16_500);
      expect(send).toHaveBeenCalledTimes(3);
      keeper.stop('k');
      expect(keeper.active).toBe(0);
      await vi.advanceTimersByTimeAsync(60_000);
      expect(send).toHaveBeenCalledTimes(3);
    } finally {
      vi.useRealTimers();
    }
  });

  it('gives up after maxMs if never stopped', async () => {
    vi.useFakeTimers();
    try {
      const send = vi.fn(async () => {});
      const keeper = new TypingKeeper(send, { refreshMs: 1_000, maxMs: 3_000 });
      await keeper.start('k', 'c');
      await vi.advanceTimersByTimeAsync(10_000);
      expect(keeper.active).toBe(0);
      expect(send.mock.calls.length).toBeLessThanOrEqual(4);
    } finally {
      vi.useRealTimers();
    }
  });
});
