import { describe, expect, it } from 'vitest';
import { misleadingLabel, shownTarget } from '../../src/render/link-labels.js';
import { discordMarkdown } from '../../adapters/discord/markdown.js';
import { renderSlackReply } from '../../adapters/slack/render.js';
import { unmaskOutsideFences } from '../../src/render/masked-links.js';

describe('misleadingLabel: a link label that names another address than the link opens', () => {
  it.each([
    ['https://bank.example', 'https://evil.example'],
    ['bank.example/login', 'https://evil.example/login'],
    ['Sign in at www.bank.example now', 'https://evil.example'],
    ['user@bank.example:8443/x', 'https://evil.example'],
    ['10.0.0.1', 'https://evil.example'],
    ['bank.example', 'https://b\u0430nk.example'],
    ['bank\u200B.example', 'https://evil.example'],
    ['\u202Elpmaxe.knab', 'https://bank.example'],
    ['support@bank.example', 'mailto:help@evil.example?subject=hi'],
  ])('%j → %s is misleading', (label, href) => {
    expect(misleadingLabel(label, href)).toBe(true);
  });

  it.each([
    ['the docs', 'https://docs.example/guide'],
    ['docs.example', 'https://docs.example/guide'],
    ['www.bank.example', 'https://bank.example'],
    ['BANK.example/login', 'https://login.bank.example/'],
    ['see section 2.1', 'https://docs.example'],
    ['bank.example', 'mailto:help@bank.example'],
    ['write to support', 'mailto:help@evil.example'],
  ])('%j → %s is not', (label, href) => {
    expect(misleadingLabel(label, href)).toBe(false);
  });

  it('shows a look-alike host in punycode', () => {
    expect(shownTarget('https://b\u0430nk.example/x')).toBe('https://xn--bnk-6cd.example/x');
  });
});

/**
 * A reply is untrusted and can be tens of kilobytes: every shape that could make a pattern
 * backtrack renders in one pass (no timing assertion: a catastrophe would not finish).
 */
describe('a 40 KB hostile reply renders', () => {
  const N = 40_000;
  const fill = (unit: string) => unit.repeat(Math.ceil(N / unit.length)).slice(0, N);
  const shapes: Record<string, string> = {
    brackets: fill('['),
    'open labels': fill('[a'),
    'long unclosed links': fill(`[${'a'.repeat(3999)}](${'b'.repeat(3999)}`),
    parentheses: `[x](https://e.example/${fill('(')}`,
    'a label of dots': `[${fill('a.')}](https://e.example)`,
    'link closers': fill(']('),
    'nested brackets': fill('[[a](https://b.example)]'),
    'open titles': fill('[a.com](https://b.com "'),
    'bidi in bare URLs': fill('https://e.example/\u202Ex '),
    'one run of URLs': fill('https://\u202E'),
    'misleading links': fill('[https://bank.example](https://evil.example/x) '),
  };

  it.each(Object.entries(shapes))('%s, for Discord, Slack and the playground', (name, reply) => {
    const discord = discordMarkdown(reply);
    const web = unmaskOutsideFences(reply, (label, target) => `${label} (${target})`);
    expect(web.length).toBeGreaterThan(0);
    const slack = renderSlackReply(reply).join('\n');
    expect(discord.length).toBeGreaterThan(0);
    expect(slack.length).toBeGreaterThan(0);
    if (name.includes('bidi')) {
      expect(discord).not.toMatch(/[\u202A-\u202E]/);
      expect(slack).not.toMatch(/[\u202A-\u202E]/);
    }
    if (name === 'misleading links') {
      expect(discord).not.toContain('](https://evil.example');
      expect(slack).not.toContain('|https://bank.example');
      expect(discord).toContain('https://bank.example (<https://evil.example/x>)');
      expect(slack).toContain('https://bank.example (<https://evil.example/x>)');
      expect(web).toContain('https://bank.example (https://evil.example/x)');
    }
  });
});
