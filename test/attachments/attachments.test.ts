import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendFiles, downloadText, isTextLike, notSentNotice, readAttachments } from '../../src/attachments/index.js';
import { startSlackEmulator } from '../emulators/slack/index.js';

/** A small file server: routes by path, records the Authorization header of each request. */
let server: Server;
let other: Server;
let base = '';
let otherBase = '';
const seenAuth: Record<string, string | undefined> = {};

beforeAll(async () => {
  other = createServer((req, res) => {
    seenAuth[`other${req.url}`] = req.headers.authorization;
    res.setHeader('content-type', 'text/plain');
    res.end('from the other host');
  });
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  otherBase = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
  server = createServer((req, res) => {
    seenAuth[req.url!] = req.headers.authorization;
    switch (req.url) {
      case '/notes.txt':
        res.setHeader('content-type', 'text/plain');
        return res.end('hello\n');
      case '/big.txt':
        res.setHeader('content-type', 'text/plain');
        return res.end('x'.repeat(2000));
      case '/big-chunked.txt':
        res.setHeader('content-type', 'text/plain');
        res.write('y'.repeat(1500));
        return res.end('y'.repeat(1500));
      case '/signin':
        res.setHeader('content-type', 'text/html; charset=utf-8');
        return res.end('<html>Sign in to Slack</html>');
      case '/files-pri/T-F1/download/page.html':
        // Slack's answer to a bad token, whatever the file's name.
        res.setHeader('content-type', 'text/html; charset=utf-8');
        return res.end('<!DOCTYPE html><html><head><title>Slack</title></head><body><form id="signin_form">Sign in to Slack</form></body></html>');
      case '/files-pri/T-F2/download/report.html':
        res.setHeader('content-type', 'text/html; charset=utf-8');
        return res.end('<!DOCTYPE html><html><head><title>Q3 report</title></head><body><p>Revenue rose.</p></body></html>');
      case '/binary.txt':
        res.setHeader('content-type', 'application/octet-stream');
        return res.end(Buffer.from([0x50, 0x4b, 0, 1]));
      case '/redirect-same':
        res.writeHead(302, { location: '/notes.txt' });
        return res.end();
      case '/redirect-other':
        res.writeHead(302, { location: `${otherBase}/file` });
        return res.end();
      case '/slow':
        return; // never answers
      default:
        res.statusCode = 404;
        return res.end('nope');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
  other.close();
});

describe('isTextLike', () => {
  it('accepts text, JSON, CSV, Markdown and source code; refuses images, audio, PDF and archives', () => {
    for (const { textLike, ...f } of [
      { name: 'a.txt', mimetype: 'text/plain', textLike: true },
      { name: 'a.json', mimetype: 'application/json', textLike: true },
      { name: 'a.csv', mimetype: 'text/csv', textLike: true },
      { name: 'README.md', mimetype: 'application/octet-stream', textLike: true },
      { name: 'main.rs', mimetype: '', textLike: true },
      { name: 'x.ts', textLike: true },
      { name: 'Dockerfile', mimetype: 'application/octet-stream', textLike: true },
      { name: 'feed', mimetype: 'application/atom+xml', textLike: true },
      { name: 'a.png', mimetype: 'image/png', textLike: false },
      { name: 'a.mp3', mimetype: 'audio/mpeg', textLike: false },
      { name: 'a.pdf', mimetype: 'application/pdf', textLike: false },
      { name: 'a.zip', mimetype: 'application/zip', textLike: false },
      { name: 'a.docx', mimetype: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', textLike: false },
      { name: 'fake.txt', mimetype: 'image/png', textLike: false },
      { name: 'blob', mimetype: 'application/octet-stream', textLike: false },
    ])
      expect(isTextLike(f), f.name).toBe(textLike);
  });
});

describe('downloadText', () => {
  it('reads a text file with the auth header', async () => {
    expect(await downloadText(`${base}/notes.txt`, { authHeaders: { authorization: 'Bearer t1' } })).toEqual({ ok: true, text: 'hello\n', bytes: 6 });
    expect(seenAuth['/notes.txt']).toBe('Bearer t1');
  });

  it('stops at the byte limit, announced or streamed', async () => {
    expect(await downloadText(`${base}/big.txt`, { maxBytes: 1000 })).toMatchObject({ ok: false, reason: 'too_large' });
    expect(await downloadText(`${base}/big-chunked.txt`, { maxBytes: 2000 })).toMatchObject({ ok: false, reason: 'too_large' });
    expect(await downloadText(`${base}/big-chunked.txt`, { maxBytes: 3000 })).toMatchObject({ ok: true, bytes: 3000 });
  });

  it('treats an HTML page as a sign-in page, NUL bytes as binary, 404 as http', async () => {
    expect(await downloadText(`${base}/signin`)).toMatchObject({ ok: false, reason: 'sign_in_page', status: 200 });
    expect(await downloadText(`${base}/binary.txt`)).toMatchObject({ ok: false, reason: 'not_text' });
    // An .html file may be HTML, but Slack's sign-in page is still recognised by its content.
    expect(await downloadText(`${base}/files-pri/T-F1/download/page.html`)).toMatchObject({ ok: false, reason: 'sign_in_page', status: 200 });
    expect(await downloadText(`${base}/files-pri/T-F2/download/report.html`)).toMatchObject({ ok: true, text: expect.stringContaining('Revenue rose.') });
    expect(await downloadText(`${base}/missing`)).toMatchObject({ ok: false, reason: 'http', status: 404 });
  });

  it("recognises the Slack emulator's sign-in page for an .html file downloaded with a wrong token", async () => {
    const slack = await startSlackEmulator();
    try {
      const f = slack.files.add({ name: 'page.html', mimetype: 'text/html', content: '<html><body><p>a page</p></body></html>' });
      const url = String(f.url_private_download);
      expect(await downloadText(url, { authHeaders: { authorization: 'Bearer xoxb-wrong' } })).toMatchObject({ ok: false, reason: 'sign_in_page' });
      expect(await downloadText(url, { authHeaders: { authorization: `Bearer ${slack.identity.botToken}` } })).toMatchObject({ ok: true, text: '<html><body><p>a page</p></body></html>' });
    } finally {
      await slack.close();
    }
  });

  it('follows a redirect on the same host with the token, and to another host without it', async () => {
    expect(await downloadText(`${base}/redirect-same`, { authHeaders: { authorization: 'Bearer t2' } })).toMatchObject({ ok: true, text: 'hello\n' });
    expect(seenAuth['/notes.txt']).toBe('Bearer t2');
    expect(await downloadText(`${base}/redirect-other`, { authHeaders: { authorization: 'Bearer t3' } })).toMatchObject({ ok: true, text: 'from the other host' });
    expect('other/file' in seenAuth).toBe(true);
    expect(seenAuth['other/file']).toBeUndefined();
    expect(await downloadText(`${base}/redirect-same`, { maxRedirects: 0 })).toMatchObject({ ok: false, reason: 'redirect' });
  });

  it('gives up after the timeout', async () => {
    expect(await downloadText(`${base}/slow`, { timeoutMs: 200 })).toEqual({ ok: false, reason: 'timeout' });
  });
});

describe('appendFiles and the notice', () => {
  it('appends fenced blocks with names, with a longer fence around backticks', () => {
    const { text, skipped } = appendFiles('look', [{ name: 'a.py', text: 'print(1)' }, { name: 'b.md', text: '```js\nx\n```\n' }], 1000);
    expect(skipped).toEqual([]);
    expect(text).toBe('look\n\na.py:\n```python\nprint(1)\n```\n\nb.md:\n````markdown\n```js\nx\n```\n````');
  });

  it('cuts a file that does not fit, with a note, and stays within the limit', () => {
    const { text, skipped } = appendFiles('q', [{ name: 'log.txt', text: 'line\n'.repeat(1000) }, { name: 'more.txt', text: 'z'.repeat(500) }], 1000);
    expect(text.length).toBeLessThanOrEqual(1000);
    expect(text).toContain('(log.txt was cut here: the message may hold at most 1000 characters.)');
    expect(text.trimEnd().endsWith('```')).toBe(false);
    expect(skipped).toEqual([{ name: 'more.txt', reason: 'no_room' }]);
  });

  it('says in one line what was not sent', () => {
    expect(notSentNotice([], 100_000)).toBeUndefined();
    expect(notSentNotice([{ name: 'cat.png', reason: 'not_text' }, { name: 'huge.log', reason: 'too_large' }], 100_000)).toBe(
      'Not sent to the agent: cat.png (only text files are sent), huge.log (too large, over 100 KB).',
    );
  });

  it('readAttachments downloads text files only and reports the rest', async () => {
    const res = await readAttachments(
      'see files',
      [
        { name: 'notes.txt', mimetype: 'text/plain', url: `${base}/notes.txt`, size: 6 },
        { name: 'cat.png', mimetype: 'image/png', url: `${base}/cat.png` },
        { name: 'big.txt', mimetype: 'text/plain', url: `${base}/big.txt`, size: 2000 },
        { name: 'page.txt', mimetype: 'text/plain', url: `${base}/signin` },
      ],
      { maxBytes: 1000, maxChars: 8000 },
    );
    expect(res.text).toBe('see files\n\nnotes.txt:\n```txt\nhello\n```');
    expect(res.sent).toEqual(['notes.txt']);
    expect(res.notice).toBe('Not sent to the agent: cat.png (only text files are sent), big.txt (too large, over 1 KB), page.txt (could not be read).');
    expect(seenAuth['/cat.png']).toBeUndefined();
  });
});
