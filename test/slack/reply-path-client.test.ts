import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebClient } from '@slack/web-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplyPathWebClient } from '../../adapters/slack/reply-path-client.js';
import { createWebClient, webClientOptions } from '../../adapters/slack/web-client.js';
import { toPlatformError } from '../../adapters/slack/errors.js';
import { jsonAnswer as json, startWebApiCapture, type WebApiCapture } from '../support/web-api-capture.js';

/**
 * The reply path's calls (post, reactions) skip the WebClient's queue and retry wrapper: they
 * must put the same request on the wire and give their callers the same results and errors as
 * the stock WebClient. Each case runs one call through both against one server and compares.
 */
let api: WebApiCapture;
beforeAll(async () => {
  api = await startWebApiCapture();
});
afterAll(() => api.close());

const warnings: string[] = [];
const logger = { debug() {}, info() {}, warn: (m: string) => warnings.push(m), error() {}, setLevel() {}, getLevel: () => 'error', setName() {} } as never;
const TOKEN = 'xoxb-reply-path-token';
const stock = (timeoutMs = 2_000) => new WebClient(TOKEN, webClientOptions({ apiUrl: api.base, logger, timeoutMs }));
const replyPath = (timeoutMs = 2_000) => createWebClient(TOKEN, { apiUrl: api.base, logger, timeoutMs });


type Call = (c: WebClient) => Promise<unknown>;
const post: Call = (c) =>
  c.chat.postMessage({
    channel: 'C1',
    text: 'hi & bye <@U1>',
    thread_ts: '1700000000.000100',
    unfurl_links: false,
    link_names: false,
    metadata: { event_type: 'agent_bridge_reply', event_payload: { message_id: 'm1', chunk: 0 } },
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'hi' } }],
  });
const react: Call = (c) => c.reactions.add({ channel: 'C1', timestamp: '1700000000.000100', name: 'eyes' });
const unreact: Call = (c) => c.reactions.remove({ channel: 'C1', timestamp: '1700000000.000100', name: 'eyes' });

/** What a caller can read of an outcome: the result, or the error's class, code and data. */
async function outcome(call: Call, client: WebClient) {
  try {
    return { ok: await call(client) };
  } catch (err) {
    const e = err as Error & { code?: string; data?: unknown; retryAfter?: number; statusCode?: number; body?: unknown; original?: Error };
    return {
      error: {
        class: e.constructor.name,
        code: e.code,
        message: e.message,
        data: e.data,
        retryAfter: e.retryAfter,
        statusCode: e.statusCode,
        body: e.body,
        original: e.original?.name,
        platform: { ...toPlatformError('test', err), cause: undefined },
      },
    };
  }
}

/** Runs `call` through the stock client and the reply-path one; returns both outcomes and both requests. */
async function both(call: Call, timeoutMs?: number) {
  api.seen.length = 0;
  const a = await outcome(call, stock(timeoutMs));
  const b = await outcome(call, replyPath(timeoutMs));
  return { stock: a, replyPath: b, requests: api.seen.map(({ body, ...rest }) => ({ ...rest, form: Object.fromEntries(new URLSearchParams(body)) })) };
}

describe('the reply-path WebClient', () => {
  it('is what createWebClient builds', () => {
    expect(replyPath()).toBeInstanceOf(ReplyPathWebClient);
  });

  for (const [name, call] of [
    ['chat.postMessage', post],
    ['reactions.add', react],
    ['reactions.remove', unreact],
  ] as const) {
    it(`${name}: the same request on the wire and the same result`, async () => {
      api.answer = json(200, { ok: true, channel: 'C1', ts: '1700000000.000200' }, { 'x-oauth-scopes': 'chat:write, reactions:write' });
      const r = await both(call);
      expect(r.requests).toHaveLength(2);
      const [a, b] = r.requests;
      expect(b!.url).toBe(`/api/${name}`);
      expect({ ...b, userAgent: undefined }).toEqual({ ...a, userAgent: undefined });
      expect(b!.auth).toBe(`Bearer ${TOKEN}`);
      expect(b!.type).toBe('application/x-www-form-urlencoded');
      expect(r.replyPath).toEqual(r.stock);
      expect(r.replyPath.ok).toMatchObject({ ok: true, ts: '1700000000.000200', response_metadata: { scopes: ['chat:write', 'reactions:write'] } });
      // Only the WebClient's own user agent tells the two roads apart.
      expect(a!.userAgent).toContain('web-api');
      expect(b!.userAgent ?? '').not.toContain('web-api');
    });
  }

  it('a refusal (ok: false) is the same WebAPIPlatformError, with its retryAfter and warnings', async () => {
    api.answer = json(200, { ok: false, error: 'not_in_channel', response_metadata: { warnings: ['superfluous_charset'] } }, { 'retry-after': '7' });
    warnings.length = 0;
    const r = await both(post);
    expect(r.replyPath).toEqual(r.stock);
    expect(r.replyPath.error).toMatchObject({ class: 'WebAPIPlatformError', code: 'slack_webapi_platform_error', data: { error: 'not_in_channel', response_metadata: { retryAfter: 7 } } });
    expect(r.replyPath.error?.platform).toMatchObject({ kind: 'refused', code: 'not_in_channel' });
    expect(warnings).toEqual(['superfluous_charset', 'superfluous_charset']);
  });

  it('a harmless refusal keeps its code (already_reacted)', async () => {
    api.answer = json(200, { ok: false, error: 'already_reacted' });
    const r = await both(react);
    expect(r.replyPath).toEqual(r.stock);
    expect(r.replyPath.error?.data).toMatchObject({ error: 'already_reacted' });
  });

  it('a 429 with Retry-After is the same WebAPIRateLimitedError, read as rate_limited', async () => {
    api.answer = json(429, { ok: false, error: 'ratelimited' }, { 'retry-after': '3' });
    const r = await both(post);
    expect(r.replyPath).toEqual(r.stock);
    expect(r.replyPath.error).toMatchObject({ class: 'WebAPIRateLimitedError', retryAfter: 3, platform: { kind: 'rate_limited', retryAfterMs: 3000 } });
  });

  it('a 429 without a usable Retry-After fails as the WebClient does', async () => {
    api.answer = json(429, { ok: false }, { 'retry-after': 'soon' });
    const r = await both(unreact);
    expect(r.replyPath.error?.class).toBe(r.stock.error?.class);
    expect(r.replyPath.error?.platform).toEqual(r.stock.error?.platform);
  });

  it('an HTTP error is the same WebAPIHTTPError, with its status and body', async () => {
    api.answer = json(503, { ok: false, error: 'service_unavailable' });
    const r = await both(post);
    expect(r.replyPath).toEqual(r.stock);
    expect(r.replyPath.error).toMatchObject({ class: 'WebAPIHTTPError', statusCode: 503, body: { error: 'service_unavailable' }, platform: { status: 503 } });
  });

  it('a body that is not JSON is a platform error carrying the text', async () => {
    api.answer = (_req, res) => res.end('<html>proxy error</html>');
    const r = await both(post);
    expect(r.replyPath).toEqual(r.stock);
    expect(r.replyPath.error).toMatchObject({ class: 'WebAPIPlatformError', data: { ok: false, error: '<html>proxy error</html>' } });
  });

  it('a server that never answers is a timed-out request error', async () => {
    api.answer = () => {};
    const r = await both(react, 200);
    expect(r.replyPath.error).toMatchObject({ class: 'WebAPIRequestError', code: 'slack_webapi_request_error', platform: { kind: 'timeout' } });
    expect(r.replyPath.error?.platform).toEqual(r.stock.error?.platform);
  });

  it('a server that is gone is a network request error', async () => {
    const gone = createServer();
    await new Promise<void>((r) => gone.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(gone.address() as AddressInfo).port}/api/`;
    await new Promise<void>((r) => gone.close(() => r()));
    const a = await outcome(post, new WebClient(TOKEN, webClientOptions({ apiUrl: url, logger })));
    const b = await outcome(post, createWebClient(TOKEN, { apiUrl: url, logger }));
    expect(b.error).toMatchObject({ class: 'WebAPIRequestError', platform: { kind: 'network' } });
    expect(b.error?.platform).toEqual(a.error?.platform);
  });

  it('other methods, and a call that brings its own token, go through the WebClient', async () => {
    api.answer = json(200, { ok: true, user_id: 'U0BOT' });
    api.seen.length = 0;
    await replyPath().auth.test();
    await replyPath().chat.postMessage({ channel: 'C1', text: 'x', token: 'xoxb-other' });
    expect(api.seen.map((s) => s.userAgent ?? '')).toEqual([expect.stringContaining('web-api'), expect.stringContaining('web-api')]);
    expect(api.seen[1]!.auth).toBe('Bearer xoxb-other');
  });
});
