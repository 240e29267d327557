import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mention, startDiscordBridge, type DiscordHarness } from './harness.js';

/**
 * Threads started while the bridge runs. Discord announces one with THREAD_CREATE; a thread whose
 * announcement the bot missed reaches it first as a message, with no parent in discord.js's cache,
 * and must still be answered by the parent channel's instance, not told "not connected".
 */
describe('Discord: threads started after the bot connected', () => {
  let h: DiscordHarness;
  const w = () => h.discord.world;

  beforeAll(async () => {
    h = await startDiscordBridge({ agent: { reply: (_id, message) => `echo: ${message}` } });
  });
  afterAll(async () => h?.close());

  it('answers a mention in a new thread of a bound channel (THREAD_CREATE first)', async () => {
    const thread = h.discord.createThread(w().channels.general, 'fresh thread');
    const m = h.discord.sendMessage({ author: w().users.alice, channel: thread, content: `${mention(h.discord)} in a fresh thread` });
    const reply = await h.discord.waitFor(() => h.discord.repliesTo(m.id)[0], 'the answer in the thread');
    expect(reply.content).toBe('echo: in a fresh thread');
  });

  it('answers in a thread whose THREAD_CREATE the bot never got, by the parent channel\'s instance', async () => {
    const thread = h.discord.createThread(w().channels.general, 'unannounced thread', { announce: false });
    const m = h.discord.sendMessage({ author: w().users.alice, channel: thread, content: `${mention(h.discord)} where am I` });
    const reply = await h.discord.waitFor(() => h.discord.repliesTo(m.id)[0], 'the answer in the thread');
    expect(reply.content).toBe('echo: where am I');
    expect(h.agent.chatCalls().filter((c) => c.message === 'where am I').map((c) => c.instanceId)).toEqual(['demo-helper']);
  });
});
