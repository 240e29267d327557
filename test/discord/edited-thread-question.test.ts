import { afterEach, describe, expect, it } from 'vitest';
import { ChannelType, type Client } from 'discord.js';
import { mention, startDiscordBridge, until, type DiscordHarness } from './harness.js';
import type { EmuChannel, Json } from '../emulators/discord/index.js';
import { HeldCalls } from '../support/held-calls.js';
import { openForAll } from '../support/open-for-all.js';
import { heldQuestions } from './held-questions.js';

/**
 * A question waiting in a thread is edited (a secret taken out, or the mention) when discord.js
 * no longer holds the thread, or the message: discord.js drops MESSAGE_UPDATE in a channel it
 * does not cache (the update carries no channel type to build it from), as for DMs
 * (uncached-channel-edit.ts), and has no message to compare with once 50 newer came
 * (`Partials.Message`). Either way the agent must get the edited text, or nothing.
 */

const held = new HeldCalls();
let h: DiscordHarness;
openForAll(async () => (h = await startDiscordBridge({ held })));
const { called, say, heldQuestion, queued, release, pushOutOfCache } = heldQuestions(() => h, held);
const w = () => h.discord.world;
const client = (): Client => h.adapter.client!;
const at = () => `${mention(h.discord)} `;
const editApplied = (m: Json) => until(() => h.logs.matching(/was edited: the agent will be asked the edited text/).some((l) => l.messageId === m.id), 'edit applied');
const isCached = (channel: EmuChannel) => client().channels.cache.has(channel.id);

/**
 * The thread leaves discord.js's caches as its thread sweeper takes it out (the client, the guild
 * and the parent channel), which is also where a restarted process stands for a thread
 * GUILD_CREATE did not list.
 */
function dropThread(thread: EmuChannel): void {
  client().sweepers.sweepThreads((t) => t.id === thread.id);
  expect(isCached(thread)).toBe(false);
}

describe('Discord: a question edited in a thread discord.js does not cache', () => {
  // A test that fails leaves no call held for the next.
  afterEach(release);

  it('the edited text, not the secret, reaches the agent', async () => {
    const thread = h.discord.createThread(w().channels.general, 'login help');
    const first = await heldQuestion(thread, 'thread first', at());
    const secret = say(thread, `${at()}my password is hunter5, does it work?`);
    await queued(secret);
    dropThread(thread);
    h.discord.editMessage(secret, `${at()}my password is [removed], does it work?`);
    await editApplied(secret);
    release();
    await h.discord.waitFor(() => h.discord.repliesTo(first.id)[0], 'first answered');
    await h.discord.waitFor(() => h.discord.repliesTo(secret.id)[0], 'edited one answered');
    expect(called('hunter5')).toBe(0);
    expect(h.discord.repliesTo(secret.id).map((m) => m.content)).toEqual(['echo: my password is [removed], does it work?']);
    expect(h.logs.text).not.toContain('hunter5');
  });

  it('a question whose mention is edited out is withdrawn: no agent call', async () => {
    const thread = h.discord.createThread(w().channels.general, 'second thoughts');
    const first = await heldQuestion(thread, 'thread slow one', at());
    const regretted = say(thread, `${at()}and my key is qrs-oops`);
    await queued(regretted);
    dropThread(thread);
    h.discord.editMessage(regretted, 'never mind, and my key is gone');
    await until(() => h.logs.matching(/no longer addressed to the bot/).some((l) => l.messageId === regretted.id), 'withdrawal logged');
    release();
    await h.discord.waitFor(() => h.discord.repliesTo(first.id)[0], 'first answered');
    const next = say(thread, `${at()}thread next one`);
    await h.discord.waitFor(() => h.discord.repliesTo(next.id)[0], 'next one answered');
    expect(called('qrs-oops')).toBe(0);
    expect(called('key is gone')).toBe(0);
    expect(h.discord.repliesTo(regretted.id)).toEqual([]);
  });

  it('in a private thread (type 12) the bot was added to: the edited text reaches the agent', async () => {
    const thread = h.discord.createThread(w().channels.general, 'private help', { private: true });
    const first = await heldQuestion(thread, 'private first', at());
    const secret = say(thread, `${at()}my recovery phrase is otter-lamp-nine`);
    await queued(secret);
    dropThread(thread);
    h.discord.editMessage(secret, `${at()}my recovery phrase is [removed]`);
    await editApplied(secret);
    release();
    await h.discord.waitFor(() => h.discord.repliesTo(secret.id)[0], 'edited one answered');
    expect(h.discord.repliesTo(first.id)).toHaveLength(1);
    expect(called('otter-lamp')).toBe(0);
    expect(h.discord.repliesTo(secret.id).map((m) => m.content)).toEqual(['echo: my recovery phrase is [removed]']);
    // Fetched again as what it is.
    expect(client().channels.cache.get(thread.id)?.type).toBe(ChannelType.PrivateThread);
  });

  it('neither the thread nor the message cached (50 newer in it): the edited text reaches the agent', async () => {
    // Known only from its messages: its THREAD_CREATE was missed.
    const thread = h.discord.createThread(w().channels.general, 'busy thread', { announce: false });
    const first = await heldQuestion(thread, 'busy thread first', at());
    const secret = say(thread, `${at()}the code is 77-31-05, right?`);
    await queued(secret);
    await pushOutOfCache(thread, secret);
    dropThread(thread);
    h.discord.editMessage(secret, `${at()}the code is [removed], right?`);
    await editApplied(secret);
    release();
    await h.discord.waitFor(() => h.discord.repliesTo(secret.id)[0], 'edited one answered');
    expect(h.discord.repliesTo(first.id)).toHaveLength(1);
    expect(called('77-31-05')).toBe(0);
    expect(h.discord.repliesTo(secret.id).map((m) => m.content)).toEqual(['echo: the code is [removed], right?']);
  });
});

describe('Discord: a question edited in a thread once discord.js no longer caches the message', () => {
  afterEach(release);

  it('a thread known only from its messages, the question behind 50 newer: the edited text reaches the agent', async () => {
    const thread = h.discord.createThread(w().channels.general, 'unannounced busy thread', { announce: false });
    const first = await heldQuestion(thread, 'unannounced first', at());
    const secret = say(thread, `${at()}my token is tok-9981, keep it safe`);
    await queued(secret);
    await pushOutOfCache(thread, secret);
    h.discord.editMessage(secret, `${at()}my token is [removed], keep it safe`);
    await editApplied(secret);
    release();
    await h.discord.waitFor(() => h.discord.repliesTo(secret.id)[0], 'edited one answered');
    expect(h.discord.repliesTo(first.id)).toHaveLength(1);
    expect(called('tok-9981')).toBe(0);
    expect(h.discord.repliesTo(secret.id).map((m) => m.content)).toEqual(['echo: my token is [removed], keep it safe']);
  });

  it('a thread archived while the question waited, swept, then unarchived by a moderator: the mention edited out withdraws it', async () => {
    const thread = h.discord.createThread(w().channels.general, 'archived meanwhile');
    const first = await heldQuestion(thread, 'archived first', at());
    const regretted = say(thread, `${at()}and the pin is 5150`);
    await queued(regretted);
    h.discord.setThreadArchived(thread, { archived: true });
    await until(() => {
      const t = client().channels.cache.get(thread.id);
      return t?.isThread() === true && t.archived === true;
    }, 'archive seen by the client');
    // discord.js's thread sweeper drops archived threads (hours later); the message goes with it.
    dropThread(thread);
    // Discord refuses an edit in an archived thread: it is unarchived first (THREAD_UPDATE, which
    // discord.js caches the thread from again, without its messages).
    h.discord.setThreadArchived(thread, { archived: false });
    await until(() => isCached(thread), 'unarchived thread cached again');
    const again = client().channels.cache.get(thread.id);
    expect(again?.isThread() === true && again.messages.cache.has(String(regretted.id))).toBe(false);
    h.discord.editMessage(regretted, 'never mind the pin');
    await until(() => h.logs.matching(/no longer addressed to the bot/).some((l) => l.messageId === regretted.id), 'withdrawal logged');
    release();
    await h.discord.waitFor(() => h.discord.repliesTo(first.id)[0], 'first answered');
    const next = say(thread, `${at()}archived next one`);
    await h.discord.waitFor(() => h.discord.repliesTo(next.id)[0], 'next one answered');
    expect(called('5150')).toBe(0);
    expect(called('never mind')).toBe(0);
    expect(h.discord.repliesTo(regretted.id)).toEqual([]);
  });
});
