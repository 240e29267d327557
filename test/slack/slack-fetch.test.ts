import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { ErrorCode, WebClient, type WebAPIPlatformError, type WebAPIRateLimitedError, type WebAPIRequestError } from '@slack/web-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from 'undici';
import { createUndiciFetch } from '../../src/undici-fetch.js';
import { webClientOptions } from '../../adapters/slack/web-client.js';

/**
 * The WebClient on the lean fetch behaves as on Node's: the same request on the wire, and the
 * same coded errors for a refusal, a rate limit, a dead server and a timeout.
 */
let server: Server;
let base = '';
const seen: Array<{ url: string; auth?: string; type?: string; body: string }> = [];
let answer: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end('{}');

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      seen.push({ url: req.url ?? '', auth: req.headers.authorization, type: req.headers['content-type'], body });
      answer(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const silent = { debug() {}, info() {}, warn() {}, error() {}, setLevel() {}, getLevel: () => 'error', setName() {} } as never;
const client = (timeoutMs = 2_000) => new WebClient('xoxb-test-token', { ...webClientOptions({ apiUrl: base, logger: silent, timeoutMs }), fetch: createUndiciFetch(new Agent()) });
const json = (status: number, body: unknown, headers: Record<string, string> = {}) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

describe('the WebClient on the lean fetch', () => {
  it('sends the form-encoded body with the token in the header, and reads the answer', async () => {
    answer = json(200, { ok: true, ts: '1.000200', channel: 'C1' }, { 'x-oauth-scopes': 'chat:write, reactions:write' });
    const res = await client().chat.postMessage({ channel: 'C1', text: 'hi & bye', metadata: { event_type: 'agent_bridge_reply', event_payload: { chunk: 0 } } });
    expect(res).toMatchObject({ ok: true, ts: '1.000200', response_metadata: { scopes: ['chat:write', 'reactions:write'] } });
    const req = seen.at(-1)!;
    expect(req.url).toBe('/api/chat.postMessage');
    expect(req.auth).toBe('Bearer xoxb-test-token');
    expect(req.type).toBe('application/x-www-form-urlencoded');
    const form = new URLSearchParams(req.body);
    expect(form.get('text')).toBe('hi & bye');
    expect(JSON.parse(form.get('metadata')!)).toEqual({ event_type: 'agent_bridge_reply', event_payload: { chunk: 0 } });
  });

  it('reads a gzip-compressed answer (a server that compresses unasked)', async () => {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(JSON.stringify({ ok: true, ts: '2.000100' })));
    };
    expect(await client().chat.postMessage({ channel: 'C1', text: 'x' })).toMatchObject({ ok: true, ts: '2.000100' });
  });

  it("rejects Slack's refusal as a platform error carrying its code", async () => {
    answer = json(200, { ok: false, error: 'not_in_channel' });
    const err = (await client().chat.postMessage({ channel: 'C1', text: 'x' }).catch((e: unknown) => e)) as WebAPIPlatformError;
    expect(err.code).toBe(ErrorCode.PlatformError);
    expect(err.data.error).toBe('not_in_channel');
  });

  it('rejects a 429 at once with its Retry-After', async () => {
    answer = json(429, { ok: false, error: 'ratelimited' }, { 'retry-after': '7' });
    const err = (await client().reactions.add({ channel: 'C1', timestamp: '1.0', name: 'eyes' }).catch((e: unknown) => e)) as WebAPIRateLimitedError;
    expect(err.code).toBe(ErrorCode.RateLimitedError);
    expect(err.retryAfter).toBe(7);
  });

  it('rejects an HTTP error status with its status', async () => {
    answer = (_req, res) => {
      res.writeHead(503);
      res.end('unavailable');
    };
    const err = (await client().chat.postMessage({ channel: 'C1', text: 'x' }).catch((e: unknown) => e)) as { code: string; statusCode: number };
    expect(err.code).toBe(ErrorCode.HTTPError);
    expect(err.statusCode).toBe(503);
  });

  it('rejects a server that answers nothing within the timeout as a request error', async () => {
    answer = () => {};
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
