import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mention, startDiscordBridge, until, type DiscordHarness } from './harness.js';
import type { Json } from '../emulators/discord/index.js';
import { FORWARD_SHORTENED } from '../../src/ingress/forwarded-fit.js';

/**
 * A short question with a long forwarded message (Discord's client sends the two as two
 * messages, paired by the bridge; a forward alone carries no words of the sender): the forward
 * is shortened to fit MAX_MESSAGE_CHARS, saying so; only the sender's own words being too long
 * is refused. Before, the whole message was refused as "too long".
 */
const MAX_CHARS = 500;
let h: DiscordHarness;
beforeAll(async () => {
  h = await startDiscordBridge({ agent: { reply: (_id, message) => `echo: ${message.slice(0, 40)}` }, env: { MAX_MESSAGE_CHARS: String(MAX_CHARS) } });
});
afterAll(async () => {
  await h?.close();
});

const w = () => h.discord.world;
const answered = (m: Json, label: string) => h.discord.waitFor(() => h.discord.repliesTo(m.id)[0], label);
const lastCall = () => h.agent.chatCalls().at(-1)!.message;
/** About 1,900 characters in 38 lines (a Discord message holds at most 2,000). */
const longText = (word: string) => Array.from({ length: 38 }, (_, i) => `${word} line ${i} `.padEnd(49, '.')).join('\n');

describe('a long forwarded message (Discord)', () => {
  it('with a short comment that mentions the bot: the question whole, the forward shortened', async () => {
    const original = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.bound, content: longText('build') });
    h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: '', forward: original });
    const comment = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: `${mention(h.discord)} what went wrong?` });
    const reply = await answered(comment, 'answer to the comment');
    expect(reply.content).toMatch(/^echo: /);
    const got = lastCall();
    expect(got.startsWith('what went wrong?\n\nForwarded message:\n> build line 0')).toBe(true);
    expect(got.endsWith(`\n${FORWARD_SHORTENED}`)).toBe(true);
    expect(got.length).toBeLessThanOrEqual(MAX_CHARS);
  });

  it('forwarded alone in a DM: sent shortened', async () => {
    const original = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: longText('deploy') });
    const forward = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.dmBob, content: '', forward: original });
    await answered(forward, 'answer to the forward');
    const got = lastCall();
    expect(got.startsWith('Forwarded message:\n> deploy line 0')).toBe(true);
    expect(got.endsWith(`\n${FORWARD_SHORTENED}`)).toBe(true);
    expect(got.length).toBeLessThanOrEqual(MAX_CHARS);
  });

  it('with a text file: the file is kept whole, the forward shortened to leave it room', async () => {
    const original = h.discord.sendMessage({
      author: w().users.alice,
      channel: w().channels.general,
      content: longText('release'),
      attachments: [{ filename: 'versions.txt', content: 'api 1.4.2\nweb 2.0.0\n', contentType: 'text/plain' }],
    });
    const forward = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.dmBob, content: '', forward: original });
    await answered(forward, 'answer to the forward');
    const got = lastCall();
    expect(got.startsWith('Forwarded message:\n> release line 0')).toBe(true);
    expect(got).toContain(`\n${FORWARD_SHORTENED}\n\nversions.txt:\n\`\`\`txt\napi 1.4.2\nweb 2.0.0\n\`\`\``);
    expect(got.length).toBeLessThanOrEqual(MAX_CHARS);
  });

  it("is refused when the sender's own words alone are too long", async () => {
    const calls = h.agent.chatCalls().length;
    const own = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.dmBob, content: 'y'.repeat(MAX_CHARS + 20) });
    const reply = await answered(own, 'the too-long notice');
    expect(reply.content).toContain(`${(MAX_CHARS + 20).toLocaleString('en-US')} characters long`);
    await until(() => h.logs.matching(/message dropped/).find((l) => l.messageId === own.id && l.reason === 'too_long'), 'dropped as too long');
    expect(h.agent.chatCalls().length).toBe(calls);
  });
});
