import type { RecordedCall } from '../../../src/demo/agent-emulator.js';

const CREDENTIALS = /^\/api\/instances\/([^/]+)\/credentials$/;

/**
 * Requests the agent emulator received whose path is not exactly one of the spec's three
 * endpoints with a properly escaped instance ID: an unknown path (a `..` resolved away, a `/`
 * left raw, a `?` or `#` cutting the path), or a credentials segment that does not decode back
 * to one of the IDs the test sent. Empty when every request was well formed.
 */
export function unsafeAgentCalls(calls: readonly RecordedCall[], sentIds?: ReadonlySet<string>): string[] {
  const bad: string[] = [];
  for (const c of calls) {
    if (c.path === '/api/v1/chat' || c.path === '/api/v1/instances') continue;
    const match = CREDENTIALS.exec(c.path);
    if (!match) {
      bad.push(`unknown path ${c.method} ${c.path.slice(0, 200)}`);
      continue;
    }
    const segment = match[1]!;
    let id: string;
    try {
      id = decodeURIComponent(segment);
    } catch {
      bad.push(`undecodable segment ${segment.slice(0, 100)}`);
      continue;
    }
    if (segment === '.' || segment === '..' || /^(%2e|\.){1,2}$/i.test(segment)) bad.push(`dot segment ${segment}`);
    if (sentIds && !sentIds.has(id)) bad.push(`credentials for an ID the test never sent: ${JSON.stringify(id.slice(0, 100))}`);
  }
  return bad;
}

/** Strings that have broken paths, parsers and renderers before. */
export const NASTY = [
  'a/b',
  '../x',
  '..',
  '.',
  '/',
  '//',
  'a/../../b',
  '%2e%2e',
  '%2F..%2F',
  'a%2Fb',
  '"quoted"',
  "'single'",
  '`tick`',
  'x y',
  ' padded ',
  'ünïcödé',
  '\u202Eevil\u202C',
  'עברית',
  'مرحبا',
  '🙂',
  '👨‍👩‍👧',
  'a\u0300\u0301\u0302',
  'nul\u0000byte',
  'bell\u0007',
  'tab\tsep',
  'new\nline',
  'cr\rlf',
  '?q=1',
  '#frag',
  'a;b=c',
  'back\\slash',
  '<script>alert(1)</script>',
  '${process.env.AGENT_API_KEY}',
  '\u200Bzero\u200Dwidth',
  '\uFEFFbom',
  'lone\uD800surrogate',
  '%',
  '%zz',
  '*',
  'x'.repeat(10_000),
] as const;
