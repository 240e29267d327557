import { gzipSync } from 'node:zlib';
import { ErrorCode, WebClient, type WebAPIPlatformError, type WebAPIRateLimitedError, type WebAPIRequestError } from '@slack/web-api';
import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Agent } from 'undici';
import { createUndiciFetch } from '../../src/undici-fetch.js';
import { webClientOptions } from '../../adapters/slack/web-client.js';
import { jsonAnswer, startWebApiCapture, type WebApiCapture } from '../support/web-api-capture.js';

/**
 * The WebClient on the lean fetch behaves as on Node's: the same request on the wire, and the
 * same coded errors for a refusal, a rate limit, a dead server and a timeout.
 */
let api: WebApiCapture;
beforeAll(async () => {
  api = await startWebApiCapture();
});
afterAll(() => api.close());

const silent = { debug() {}, info() {}, warn() {}, error() {}, setLevel() {}, getLevel: () => 'error', setName() {} } as never;
const client = (timeoutMs = 2_000) => new WebClient('xoxb-test-token', { ...webClientOptions({ apiUrl: api.base, logger: silent, timeoutMs }), fetch: createUndiciFetch(new Agent()) });

describe('the WebClient on the lean fetch', () => {
  it('sends the form-encoded body with the token in the header, and reads the answer', async () => {
    api.answer = jsonAnswer(200, { ok: true, ts: '1.000200', channel: 'C1' }, { 'x-oauth-scopes': 'chat:write, reactions:write' });
    const res = await client().chat.postMessage({ channel: 'C1', text: 'hi & bye', metadata: { event_type: 'agent_bridge_reply', event_payload: { chunk: 0 } } });
    expect(res).toMatchObject({ ok: true, ts: '1.000200', response_metadata: { scopes: ['chat:write', 'reactions:write'] } });
    const req = api.seen.at(-1)!;
    expect(req.url).toBe('/api/chat.postMessage');
    expect(req.auth).toBe('Bearer xoxb-test-token');
    expect(req.type).toBe('application/x-www-form-urlencoded');
    const form = new URLSearchParams(req.body);
    expect(form.get('text')).toBe('hi & bye');
    expect(JSON.parse(form.get('metadata')!)).toEqual({ event_type: 'agent_bridge_reply', event_payload: { chunk: 0 } });
  });

  it('reads a gzip-compressed answer (a server that compresses unasked)', async () => {
    api.answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(JSON.stringify({ ok: true, ts: '2.000100' })));
    };
    expect(await client().chat.postMessage({ channel: 'C1', text: 'x' })).toMatchObject({ ok: true, ts: '2.000100' });
  });

  it("rejects Slack's refusal as a platform error carrying its code", async () => {
    api.answer = jsonAnswer(200, { ok: false, error: 'not_in_channel' });
    const err = (await client().chat.postMessage({ channel: 'C1', text: 'x' }).catch((e: unknown) => e)) as WebAPIPlatformError;
    expect(err.code).toBe(ErrorCode.PlatformError);
    expect(err.data.error).toBe('not_in_channel');
  });

  it('rejects a 429 at once with its Retry-After', async () => {
    api.answer = jsonAnswer(429, { ok: false, error: 'ratelimited' }, { 'retry-after': '7' });
    const err = (await client().reactions.add({ channel: 'C1', timestamp: '1.0', name: 'eyes' }).catch((e: unknown) => e)) as WebAPIRateLimitedError;
    expect(err.code).toBe(ErrorCode.RateLimitedError);
    expect(err.retryAfter).toBe(7);
  });

  it('rejects an HTTP error status with its status', async () => {
    api.answer = (_req, res) => {
      res.writeHead(503);
      res.end('unavailable');
    };
    const err = (await client().chat.postMessage({ channel: 'C1', text: 'x' }).catch((e: unknown) => e)) as { code: string; statusCode: number };
    expect(err.code).toBe(ErrorCode.HTTPError);
    expect(err.statusCode).toBe(503);
  });

  it('rejects a server that answers nothing within the timeout as a request error', async () => {
    api.answer = () => {};
    const started = Date.now();
    const err = (await client(300).chat.postMessage({ channel: 'C1', text: 'x' }).catch((e: unknown) => e)) as WebAPIRequestError;
    expect(err.code).toBe(ErrorCode.RequestError);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('rejects a closed port as a request error', async () => {
    const dead = new WebClient('xoxb-test-token', { ...webClientOptions({ apiUrl: 'http://127.0.0.1:1/api/', logger: silent }), fetch: createUndiciFetch(new Agent()) });
    const err = (await dead.chat.postMessage({ channel: 'C1', text: 'x' }).catch((e: unknown) => e)) as WebAPIRequestError;
    expect(err.code).toBe(ErrorCode.RequestError);
  });
});

describe('the lean fetch on its own', () => {
  it('sends each URL its own path and query, also past the parsed-URL cache (256)', async () => {
    api.answer = jsonAnswer(200, { ok: true });
    const leanFetch = createUndiciFetch(new Agent());
    const before = api.seen.length;
    for (let i = 0; i < 300; i++) {
      const res = await leanFetch(`${api.base}/files/F${i}?download=${i}&x=a%20b`);
      expect(res.status).toBe(200);
      await res.text();
    }
    // The first URLs again, after the cache started over.
    const again = await leanFetch(`${api.base}/files/F0?download=0&x=a%20b`);
    await again.text();
    const urls = api.seen.slice(before).map((r) => r.url);
    expect(urls).toHaveLength(301);
    expect(urls[0]).toMatch(/\/files\/F0\?download=0&x=a%20b$/);
    expect(urls[299]).toMatch(/\/files\/F299\?download=299&x=a%20b$/);
    expect(urls[300]).toBe(urls[0]);
  });

  it('a call aborted while it waits for a connection fails at once, and never reaches the server', async () => {
    const held: Array<() => void> = [];
    api.answer = (req, res) => (req.url?.endsWith('/slow') ? held.push(() => res.end('{"ok":true}')) : res.end('{"ok":true}'));
    const leanFetch = createUndiciFetch(new Agent({ connections: 1 }));
    const first = leanFetch(`${api.base}slow`);
    await vi.waitFor(() => expect(held).toHaveLength(1));
    const controller = new AbortController();
    const waiting = leanFetch(`${api.base}waits`, { signal: controller.signal });
    const before = api.seen.length;
    controller.abort(new Error('given up'));
    const err = (await waiting.catch((e: unknown) => e)) as TypeError & { cause: Error };
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toBe('fetch failed');
    expect(err.cause.message).toBe('given up');
    held.shift()!();
    expect((await first).status).toBe(200);
    // Give the freed connection a moment to take the dropped call, had it kept it.
    await new Promise((r) => setTimeout(r, 100));
    expect(api.seen.length).toBe(before);
  });

  it('a connection dropped in the middle of the body: the answer arrives, reading it fails like fetch', async () => {
    api.answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"ok":tr');
      setTimeout(() => res.socket?.destroy(), 20);
    };
    const res = await createUndiciFetch(new Agent())(`${api.base}cut`);
    expect(res.status).toBe(200);
    const err = (await res.text().catch((e: unknown) => e)) as TypeError;
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toBe('fetch failed');
  });

  it('leaves no abort listener on the signal once the call is over', async () => {
    api.answer = jsonAnswer(200, { ok: true });
    const leanFetch = createUndiciFetch(new Agent());
    const controller = new AbortController();
    for (let i = 0; i < 20; i++) await (await leanFetch(`${api.base}ping`, { signal: controller.signal })).json();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
