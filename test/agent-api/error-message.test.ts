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
