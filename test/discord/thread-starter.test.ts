import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mention, startDiscordBridge, type DiscordHarness } from './harness.js';

/**
 * Thread context (`/agent set context thread`) in a thread started from a message: Discord opens
 * such a thread with a THREAD_STARTER_MESSAGE (type 21, no content) whose `referenced_message` is
 * the message it was started from. That message, often the question itself, comes first.
 */
let h: DiscordHarness;
beforeAll(async () => {
  h = await startDiscordBridge({ agent: { reply: (_id, message) => `echo: ${message.slice(0, 40)}` }, env: { THREAD_CONTEXT_MAX_MESSAGES: '3' } });
});
afterAll(async () => {
  await h?.close();
});

const w = () => h.discord.world;

describe('thread context in a thread started from a message', () => {
  it('begins with the message the thread was started from', async () => {
    const set = h.discord.runCommand({ user: w().users.alice, channel: w().channels.general, subcommand: 'set', options: { setting: 'context', value: 'thread' } });
    await h.discord.waitFor(() => set.original?.content.includes('Setting changed'), 'context set');
    const starter = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: 'The nightly deploy dies with exit code 137 on the api pod since Tuesday.' });
    const thread = h.discord.createThread(w().channels.general, 'nightly deploy', { from: starter });
    h.discord.sendMessage({ author: w().users.carol, channel: thread, content: 'I saw the same on staging.' });
    const q = h.discord.sendMessage({ author: w().users.bob, channel: thread, content: `${mention(h.discord)} what could cause this?` });
    await h.discord.waitFor(() => h.discord.repliesTo(q.id)[0], 'reply in the thread');
    expect(h.agent.chatCalls().at(-1)!.message).toBe(
      'Earlier messages in this thread:\nBob: The nightly deploy dies with exit code 137 on the api pod since Tuesday.\nCarol: I saw the same on staging.\n\nNew message from Bob:\nwhat could cause this?',
    );
  });

  it('still begins with it when the thread is longer than THREAD_CONTEXT_MAX_MESSAGES, the skipped part marked', async () => {
    const starter = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: 'Checkout p95 doubled after the 14:00 release.' });
    const thread = h.discord.createThread(w().channels.general, 'checkout latency', { from: starter });
    for (const n of [1, 2, 3, 4, 5]) h.discord.sendMessage({ author: w().users.carol, channel: thread, content: `note ${n}` });
    const q = h.discord.sendMessage({ author: w().users.bob, channel: thread, content: `${mention(h.discord)} where do I start?` });
    await h.discord.waitFor(() => h.discord.repliesTo(q.id)[0], 'reply in the long thread');
    expect(h.agent.chatCalls().at(-1)!.message).toBe(
      'Earlier messages in this thread:\nBob: Checkout p95 doubled after the 14:00 release.\n(later messages of this thread could not be read)\nCarol: note 4\nCarol: note 5\n\nNew message from Bob:\nwhere do I start?',
    );
  });
});
