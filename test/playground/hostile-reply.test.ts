import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { webReplyPortFixture } from './reply-port-fixture.js';

/**
 * The agent's reply is untrusted text. The playground page links `[label](url)` as written, so
 * a label that names another address than the link opens must reach the page unmasked: the
 * label as text, the real URL after it (which the page links on its own).
 */
describe('web reply port: a hostile reply', () => {
  const web = webReplyPortFixture('pghostile');

  it('stores misleading links unmasked, other links and code as they were', async () => {
    const reply = [
      'Log in at [https://bank.example/login](https://evil.example/phish) or [\u202Elpmaxe.knab](https://evil.example/rtl).',
      'Fine: [the docs](https://docs.example/guide).',
      '```md',
      '[https://bank.example](https://evil.example) in code stays',
      '```',
    ].join('\n\n');
    const target = { channelId: 'hostile', messageId: randomUUID() };
    const chunks = web.port.render(reply);
    for (const [i, chunk] of chunks.entries()) await web.port.postChunk(target, chunk, i, { messageId: target.messageId, total: chunks.length, mayExist: false });
    const stored = (await web.store.history('hostile', { count: 10 })).flatMap((e) => (e.type === 'reply' ? [e.text] : [])).join('\n');
    expect(stored).toContain('https://bank.example/login (https://evil.example/phish)');
    expect(stored).toContain('lpmaxe.knab (https://evil.example/rtl)');
    expect(stored).not.toMatch(/[\u202A-\u202E\u2066-\u2069]/);
    expect(stored).toContain('[the docs](https://docs.example/guide)');
    expect(stored).toContain('[https://bank.example](https://evil.example) in code stays');
  });
});
