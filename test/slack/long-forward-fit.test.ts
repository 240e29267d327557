import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, chatCalls, postsIn, startSlackBridge, until, W, type SlackHarness } from './harness.js';
import { FORWARD_SHORTENED } from '../../src/ingress/forwarded-fit.js';
import { tooLongToAsk } from '../../adapters/slack/ask-shortcut.js';

/**
 * A short question about a long forwarded message: the forward is shortened to fit
 * MAX_MESSAGE_CHARS (and the agent is told so); only the sender's own words being too long is
 * refused. Before, the whole message was refused as "too long".
 */
const MAX_CHARS = 500;
let h: SlackHarness;
beforeAll(async () => {
  h = await startSlackBridge({ mode: 'http', env: { MAX_MESSAGE_CHARS: String(MAX_CHARS) } });
});
afterAll(async () => {
  await h?.close();
});

const messages = () => chatCalls(h).map((c) => String((c.json as { message?: string }).message));
const agentGot = (text: string) => messages().find((m) => m.includes(text));
/** A forwarded message of about 2,000 characters, in 40 lines. */
const longForward = (word: string) => ({
  is_share: true,
  author_id: W.admin,
  author_name: 'Ada Admin',
  text: Array.from({ length: 40 }, (_, i) => `${word} line ${i} `.padEnd(50, '.')).join('\n'),
});

describe('a short question with a long forwarded message (Slack)', () => {
  it('reaches the agent with the question whole and the forward shortened, saying so', async () => {
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} what went wrong here?`, attachments: [longForward('build')] });
    await h.to.event(m.mention);
    await h.to.event(m.message);
    await until(() => agentGot('what went wrong here?'), 'the question sent to the agent');
    const got = agentGot('what went wrong here?')!;
    expect(got.startsWith('what went wrong here?\n\nForwarded message from Ada Admin:\n> build line 0')).toBe(true);
    expect(got.endsWith(`\n${FORWARD_SHORTENED}`)).toBe(true);
    expect(got.length).toBeLessThanOrEqual(MAX_CHARS);
    await until(() => postsIn(h, W.general, m.ts).length > 0, 'the answer in the thread');
    expect(postsIn(h, W.general, m.ts).some((c) => /characters long/.test(c.params.text ?? ''))).toBe(false);
  });

  it('with a text file too: the file is kept whole, the forward shortened to leave it room', async () => {
    const file = h.slack.files.add({ name: 'steps.txt', mimetype: 'text/plain', content: 'step 1: build\nstep 2: test\n' });
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} which step broke?`, attachments: [longForward('pipeline')], files: [file] });
    await h.to.event(m.mention);
    await h.to.event(m.message);
    await until(() => agentGot('which step broke?'), 'the question sent to the agent');
    const got = agentGot('which step broke?')!;
    expect(got.startsWith('which step broke?\n\nForwarded message from Ada Admin:\n> pipeline line 0')).toBe(true);
    expect(got).toContain(`\n${FORWARD_SHORTENED}\n\nsteps.txt:\n\`\`\`txt\nstep 1: build\nstep 2: test\n\`\`\``);
    expect(got.length).toBeLessThanOrEqual(MAX_CHARS);
    await until(() => postsIn(h, W.general, m.ts).length > 0, 'the answer in the thread');
    expect(postsIn(h, W.general, m.ts).some((c) => /Not sent to the agent/.test(c.params.text ?? ''))).toBe(false);
  });

  it('is refused when the sender\'s own words alone are too long', async () => {
    const own = 'x'.repeat(MAX_CHARS + 50);
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} ${own}`, attachments: [longForward('deploy')] });
    await h.to.event(m.mention);
    await h.to.event(m.message);
    await until(() => postsIn(h, W.general, m.ts).find((c) => /characters long/.test(c.params.text ?? '')), 'the too-long notice');
    expect(postsIn(h, W.general, m.ts).find((c) => /characters long/.test(c.params.text ?? ''))!.params.text).toContain(`${(MAX_CHARS + 50).toLocaleString('en-US')} characters long`);
    expect(agentGot('deploy line 0')).toBeUndefined();
  });

  it('"Ask the agent" on a message carrying a long forward: sent, the forward shortened', async () => {
    const m = h.slack.userMessage({ channel: W.general, user: W.admin, text: 'see below', attachments: [longForward('incident')] });
    await h.to.interaction(h.slack.messageShortcut({ user: W.user, channel: W.general, messageTs: m.ts, callbackId: 'ask_agent' }));
    await until(() => agentGot('incident line 0'), 'the shortcut sent to the agent');
    const got = agentGot('incident line 0')!;
    expect(got).toMatch(/^Message from Ada Admin:\nsee below\n\nForwarded message from Ada Admin:\n> incident line 0/);
    expect(got.endsWith(`\n${FORWARD_SHORTENED}`)).toBe(true);
    expect(got.length).toBeLessThanOrEqual(MAX_CHARS);
  });

  it('"Ask the agent" on a message whose own words are too long: the asker alone is told (they cannot shorten it), nothing in the thread', async () => {
    const m = h.slack.userMessage({ channel: W.general, user: W.admin, text: `stack trace ${'z'.repeat(MAX_CHARS)}` });
    const calls = chatCalls(h).length;
    await h.to.interaction(h.slack.messageShortcut({ user: W.user, channel: W.general, messageTs: m.ts, callbackId: 'ask_agent' }));
    const told = await h.slack.waitForCall('response_url', (c) => /characters long/.test(String(c.params.text ?? '')), 20_000);
    expect(told.params.response_type).toBe('ephemeral');
    expect(String(told.params.text)).toBe(tooLongToAsk('stack trace '.length + MAX_CHARS, MAX_CHARS));
    await new Promise((r) => setTimeout(r, 500));
    expect(postsIn(h, W.general, m.ts)).toEqual([]);
    expect(chatCalls(h).length).toBe(calls);
  });
});

