import { describe, expect, it } from 'vitest';
import { readableDetail } from '../../src/agent-api/error-message.js';
import { scrub, secretForms } from '../../src/core/scrub.js';

describe('readableDetail', () => {
  it.each([
    ['{"error":"nope"}', 'nope'],
    ['{"message":"  spaced   out  "}', 'spaced out'],
    ['{"detail":"missing field"}', 'missing field'],
    ['{"error":{"message":"nested"}}', 'nested'],
    ['{"errors":["ignored"],"message":"picked"}', 'picked'],
    ['{"detail":[{"loc":["body"],"msg":"a"},{"msg":"b"}]}', 'a; b'],
    ['"just a string"', 'just a string'],
    ['{"status":500}', '{"status":500}'],
    ['plain text\nerror', 'plain text error'],
    ['', ''],
  ])('%s → %j', (body, expected) => {
    expect(readableDetail(body, null, [])).toBe(expected);
  });

  it('strips HTML, scripts, styles and comments and decodes entities', () => {
    const html = '<html><!-- x --><style>p{}</style><p>A &lt;b&gt; &#65;&#x42;</p><script>var s="<p>"</script></html>';
    expect(readableDetail(html, 'text/html', [])).toBe('A <b> AB');
  });

  it('cuts at 200 characters with an ellipsis', () => {
    const out = readableDetail('y'.repeat(300), 'text/plain', []);
    expect(out).toHaveLength(200);
    expect(out.endsWith('…')).toBe(true);
  });

  it('cuts at a space: a value the service quotes across the cut is left out whole, never half kept (redaction after could not recognise half)', () => {
    const value = 'cred-straddle-0123456789abcdefghij';
    const body = JSON.stringify({ error: `instance failed to start: ${'the provider said no again '.repeat(5)}OPENAI_API_KEY=${value} was refused` });
    const out = readableDetail(body, null, []);
    expect(out.length).toBeLessThanOrEqual(200);
    expect(out.startsWith('instance failed to start: the provider')).toBe(true);
    expect(out.endsWith('…')).toBe(true);
    expect(out).not.toContain(value.slice(0, 6));
  });

  it('hides secrets before cutting, in raw, JSON-escaped and URL-encoded forms', () => {
    const secret = 'p@ss"word/1';
    const body = JSON.stringify({ error: `a ${secret} b ${encodeURIComponent(secret)}` });
    expect(readableDetail(body, null, [secret])).toBe('a [REDACTED] b [REDACTED]');
    expect(scrub(`raw ${JSON.stringify(secret)}`, [secret])).toBe('raw "[REDACTED]"');
  });

  it('a Cookie header also hides each cookie value', () => {
    expect(secretForms(['sid=abcdef; t=1'])).toEqual(expect.arrayContaining(['sid=abcdef; t=1', 'abcdef']));
    expect(scrub('cookie abcdef is stale', ['sid=abcdef; t=1'])).toBe('cookie [REDACTED] is stale');
  });
});
