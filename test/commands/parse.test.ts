import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCommandText } from '../../src/commands/parse.js';
import { COMMANDS } from '../../src/commands/registry.js';

describe('parseCommandText', () => {
  it.each([
    ['', { name: 'help' }],
    ['   ', { name: 'help' }],
    ['help', { name: 'help' }],
    ['HELP', { name: 'help' }],
    ['instances', { name: 'instances' }],
    ['unbind', { name: 'unbind' }],
    ['status', { name: 'status' }],
    ['why', { name: 'why' }],
    ['audit', { name: 'audit' }],
    ['bind inst_a', { name: 'bind', instanceId: 'inst_a' }],
    ['bind inst_a all', { name: 'bind', instanceId: 'inst_a', mode: 'all' }],
    ['  Bind   Inst_A   MENTION ', { name: 'bind', instanceId: 'Inst_A', mode: 'mention' }],
    ['bind "inst a"', { name: 'invalid', error: expect.stringMatching(/mode/) }],
    ['bind "inst_a" all', { name: 'bind', instanceId: 'inst_a', mode: 'all' }],
    ['bind\u00a0inst_a\tall', { name: 'bind', instanceId: 'inst_a', mode: 'all' }],
    ['bind inst_\u200ba', { name: 'invalid', error: expect.stringMatching(/mode/) }],
    ['credential inst_a', { name: 'credential', instanceId: 'inst_a' }],
    ['set errors reaction', { name: 'set', setting: 'errors', value: 'reaction' }],
    ['set errors SILENT', { name: 'set', setting: 'errors', value: 'silent' }],
    ['set context thread', { name: 'set', setting: 'context', value: 'thread' }],
    ['set quota user-per-minute 5', { name: 'set', setting: 'quota', value: 'user-per-minute 5' }],
    ['set quota channel-per-day 0', { name: 'set', setting: 'quota', value: 'channel-per-day 0' }],
    ['set quota user-per-day default', { name: 'set', setting: 'quota', value: 'user-per-day default' }],
  ])('%j', (text, expected) => {
    expect(parseCommandText(text)).toEqual(expected);
  });

  it.each([
    ['bind', /Name the instance/],
    ['bind inst_a sometimes', /`mention`.*`all`/],
    ['bind a b c', /Too many words/],
    ['credential', /Name the instance/],
    ['set', /Say what to set/],
    ['set errors loud', /reply.*reaction.*silent/],
    ['set context always', /off.*thread/],
    ['set quota user-per-week 5', /set quota/],
    ['set quota user-per-minute -1', /whole number/],
    ['set quota user-per-minute 1.5', /whole number/],
    ['set quota user-per-minute 99999999999', /whole number/],
    ['set quota user-per-minute', /set quota/],
    ['set colour blue', /There is no setting `colour`/],
    ['frobnicate now', /Unknown command `frobnicate`/],
    [`bind ${'x'.repeat(201)}`, /too long/],
  ])('%j is invalid with a clear error', (text, error) => {
    const parsed = parseCommandText(text);
    expect(parsed.name).toBe('invalid');
    if (parsed.name === 'invalid') expect(parsed.error).toMatch(error);
  });

  it('never echoes what follows a credential instance ID (it may be a secret)', () => {
    const parsed = parseCommandText('credential inst_a OPENAI_KEY sk-live-abc123');
    expect(parsed.name).toBe('invalid');
    expect(JSON.stringify(parsed)).not.toContain('sk-live-abc123');
    expect(JSON.stringify(parsed)).not.toContain('OPENAI_KEY');
  });

  it('keeps an echoed unknown command short and free of backticks, mentions and control characters', () => {
    const parsed = parseCommandText(`\`<!channel>\u0007${'y'.repeat(5000)}`);
    expect(parsed.name).toBe('invalid');
    if (parsed.name !== 'invalid') return;
    expect(parsed.error.length).toBeLessThan(200);
    expect(parsed.error).not.toContain('<!channel>');
    expect(parsed.error).not.toContain('\u0007');
    expect(parsed.error.match(/`/g)?.length).toBe(4);
  });

  it('handles 10,000 characters of anything', () => {
    expect(parseCommandText('bind '.repeat(2000)).name).toBe('invalid');
    expect(parseCommandText('\u0000'.repeat(10_000))).toEqual({ name: 'help' });
    expect(parseCommandText(`bind ${'é'.repeat(10_000)}`).name).toBe('invalid');
    expect(parseCommandText(null as never)).toEqual({ name: 'help' });
  });

  it('never throws and always returns a known shape (property)', () => {
    const word = fc.constantFrom('bind', 'unbind', 'set', 'quota', 'errors', 'context', 'credential', 'all', 'mention', 'user-per-minute', '5', '"', "'", '`', '\u0000', '\u202e', '🙂', '');
    const text = fc.oneof(
      fc.string({ maxLength: 10_000 }),
      fc.string({ unit: 'grapheme', maxLength: 500 }),
      fc.string({ unit: 'binary', maxLength: 2_000 }),
      fc.array(word, { maxLength: 12 }).map((w) => w.join(' ')),
    );
    fc.assert(
      fc.property(text, (t) => {
        const parsed = parseCommandText(t);
        expect([...COMMANDS.map((c) => c.name), 'invalid']).toContain(parsed.name);
        if (parsed.name === 'invalid') expect(parsed.error.length).toBeGreaterThan(0);
        if (parsed.name === 'bind' || parsed.name === 'credential') {
          expect(parsed.instanceId.length).toBeGreaterThan(0);
          expect(parsed.instanceId).not.toMatch(/[\s\p{Cc}]/u);
        }
      }),
      { numRuns: 500 },
    );
  });
});
