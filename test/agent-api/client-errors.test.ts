import { createServer } from 'node:http';
import { agentFailure } from '../support/expect-error.js';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAgentApi } from '../../src/agent-api/client.js';
import { AgentApiError } from '../../src/core/errors.js';
import { startAgentEmulator, type AgentEmulator } from '../../src/demo/agent-emulator.js';

const KEY = 'sk-live-0123456789abcdef';
const COOKIE = 'sid=cookie-secret-value-42; theme=dark';
const TOKEN = 'bearer-secret-token-77';

let emu: AgentEmulator;
beforeEach(async () => {
  emu = await startAgentEmulator({ apiKey: KEY, sessionCookie: COOKIE, sessionToken: TOKEN });
});
afterEach(async () => {
  await emu.close();
});

function api(overrides: Parameters<AgentEmulator['agentConfig']>[0] = {}) {
  return createAgentApi(emu.agentConfig({ sessionToken: TOKEN, ...overrides }));
}

const failure = agentFailure;

describe('HTTP statuses', () => {
  it.each([
    [401, 'unauthorized', false],
    [403, 'forbidden', false],
    [404, 'not_found', false],
    [400, 'bad_request', false],
    [422, 'bad_request', false],
    [500, 'server_error', true],
    [503, 'server_error', true],
  ] as const)('%i → %s (retryable: %s)', async (status, kind, retryable) => {
    emu.failNext(1, { status, body: { error: `failure ${status}` } });
    const err = await failure(api().chat('demo-helper', 'hi'));
    expect(err).toMatchObject({ kind, status, retryable, source: 'agent' });
    expect(err.message).toMatch(new RegExp(`^agent service answered ${status}: failure ${status}`));
  });

  it('reads message, detail and nested {message} fields', async () => {
    emu.failNext(1, { status: 400, body: { message: 'message field' } });
    emu.failNext(1, { status: 400, body: { detail: [{ msg: 'field required' }, { msg: 'too long' }] } });
    emu.failNext(1, { status: 400, body: { error: { code: 'E1', message: 'nested message' } } });
    const a = api();
    expect((await failure(a.chat('demo-helper', 'x'))).message).toBe('agent service answered 400: message field');
    expect((await failure(a.chat('demo-helper', 'x'))).message).toBe('agent service answered 400: field required; too long');
    expect((await failure(a.chat('demo-helper', 'x'))).message).toBe('agent service answered 400: nested message');
  });

  it('503 with an HTML page: tags stripped, whitespace collapsed', async () => {
    const html = `<!DOCTYPE html><html><head><title>503</title><style>body{color:red}</style></head>
      <body><h1>Service   Unavailable</h1>\n<p>Back &amp; better soon.</p><script>alert(1)</script></body></html>`;
    emu.failNext(1, { status: 503, body: html, contentType: 'text/html' });
    const err = await failure(api().chat('demo-helper', 'hi'));
    expect(err).toMatchObject({ kind: 'server_error', status: 503 });
    expect(err.message).toBe('agent service answered 503: 503 Service Unavailable Back & better soon.');
  });

  it('an empty error body gives the standard reason phrase', async () => {
    emu.failNext(1, { status: 502 });
    const err = await failure(api().chat('demo-helper', 'hi'));
    expect(err).toMatchObject({ kind: 'server_error', message: 'agent service answered 502 Bad Gateway' });
  });

  it('a long text body is cut to 200 characters', async () => {
    emu.failNext(1, { status: 500, body: 'x'.repeat(5000) });
    const err = await failure(api().chat('demo-helper', 'hi'));
    const detail = err.message.slice('agent service answered 500: '.length);
    expect(detail.length).toBeLessThanOrEqual(200);
    expect(detail.endsWith('…')).toBe(true);
  });

  it('a redirect is not followed (X-API-Key must not travel to another host)', async () => {
    const other = await startAgentEmulator({ apiKey: KEY });
    try {
      emu.failNext(1, { status: 302, headers: { location: `${other.baseUrl}/chat` } });
      const err = await failure(api().chat('demo-helper', 'hi'));
      expect(err.kind).toBe('bad_request');
      expect(err.message).toContain('redirect');
      expect(err.message).toContain('AGENT_API_BASE_URL');
      expect(other.calls).toHaveLength(0);
    } finally {
      await other.close();
    }
  });
});

describe('429', () => {
  it('Retry-After in seconds', async () => {
    emu.rateLimitNext(1, 7);
    const err = await failure(api().chat('demo-helper', 'hi'));
    expect(err).toMatchObject({ kind: 'rate_limited', status: 429, retryAfterMs: 7000, retryable: true });
  });

  it('Retry-After as an HTTP date', async () => {
    emu.rateLimitNext(1, new Date(Date.now() + 30_000).toUTCString());
    const err = await failure(api().listInstances());
    expect(err.kind).toBe('rate_limited');
    expect(err.retryAfterMs).toBeGreaterThan(28_000);
    expect(err.retryAfterMs).toBeLessThanOrEqual(30_000);
  });

  it('no Retry-After: no wait stated (the worker chooses a growing one); an absurd one is capped at 1 h', async () => {
    emu.rateLimitNext(1);
    emu.rateLimitNext(1, 10_000_000);
    expect((await failure(api().chat('demo-helper', 'hi'))).retryAfterMs).toBeUndefined();
    expect((await failure(api().chat('demo-helper', 'hi'))).retryAfterMs).toBe(3_600_000);
  });

  it('per-instance faults leave other instances alone', async () => {
    emu.rateLimitNext(1, 3, { instanceId: 'demo-poet' });
    const a = api();
    await expect(a.chat('demo-helper', 'hi')).resolves.toMatchObject({ messageId: 'msg_1' });
    expect((await failure(a.chat('demo-poet', 'hi'))).kind).toBe('rate_limited');
    await expect(a.chat('demo-poet', 'hi')).resolves.toMatchObject({ messageId: 'msg_2' });
  });
});

describe('invalid responses', () => {
  it.each([
    ['wrong shape', '{"reply":"hi"}'],
    ['wrong type', '{"response":42,"messageId":"m1"}'],
    ['not JSON', 'hello'],
    ['empty', ''],
    ['JSON null', 'null'],
  ])('chat 200 with %s body → invalid_response', async (_, body) => {
    emu.malformedNext(1, body);
    const err = await failure(api().chat('demo-helper', 'hi'));
    expect(err).toMatchObject({ kind: 'invalid_response', status: 200, retryable: false });
  });

  it('an instance list that is not an array, or has a bad element', async () => {
    emu.malformedNext(1, '{"instances":[]}', { endpoint: 'instances' });
    emu.malformedNext(1, '[{"id":"a","name":"A","status":"running"}]', { endpoint: 'instances' });
    expect((await failure(api().listInstances())).kind).toBe('invalid_response');
    const err = await failure(api().listInstances());
    expect(err.message).toContain('0.type');
  });

  it('a chat answer without a messageId, or with one that is not a string, is still the answer', async () => {
    emu.malformedNext(1, JSON.stringify({ response: 'hi' }));
    await expect(api().chat('demo-helper', 'hi')).resolves.toEqual({ response: 'hi' });
    emu.malformedNext(1, JSON.stringify({ response: 'hi', messageId: 42 }));
    await expect(api().chat('demo-helper', 'hi')).resolves.toEqual({ response: 'hi', messageId: undefined });
  });

  it('extra fields are tolerated', async () => {
    emu.malformedNext(1, JSON.stringify({ response: 'hi', messageId: 'msg_9', usage: { tokens: 3 }, model: 'x' }));
    await expect(api().chat('demo-helper', 'hi')).resolves.toEqual({ response: 'hi', messageId: 'msg_9' });
    emu.instances.splice(0, emu.instances.length, { id: 'i1', name: 'I', status: 'paused', type: 'bot', createdAt: 'now' } as never);
    await expect(api().listInstances()).resolves.toEqual([{ id: 'i1', name: 'I', status: 'paused', type: 'bot' }]);
    emu.malformedNext(1, JSON.stringify({ success: true, key: 'K', id: 'cred_1' }));
    await expect(api().addCredential('i1', 'K', 'value')).resolves.toEqual({ success: true, key: 'K' });
  });
});

describe('timeouts, network failures and cancellation', () => {
  it('a hanging chat times out after timeoutMs', async () => {
    emu.hangNext(1);
    const started = Date.now();
    const err = await failure(api({ timeoutMs: 200 }).chat('demo-helper', 'hi'));
    expect(err).toMatchObject({ kind: 'timeout', retryable: true });
    expect(err.message).toBe('agent service did not answer within 200 ms');
    // Sent and unanswered: the service may have run it (at-most-once does not call again).
    expect(err.code).toBe('call_may_have_run');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('other calls use otherTimeoutMs, not the chat limit', async () => {
    emu.setDelay(500, { endpoint: 'instances' });
    const err = await failure(api({ timeoutMs: 60_000, otherTimeoutMs: 150 }).listInstances());
    expect(err.kind).toBe('timeout');
  });

  it('a reset connection is a network error', async () => {
    emu.resetNext(1);
    const err = await failure(api().chat('demo-helper', 'hi'));
    expect(err).toMatchObject({ kind: 'network', retryable: true, code: 'call_may_have_run' });
    expect(err.message).toMatch(/^could not reach the agent service at 127\.0\.0\.1:\d+/);
  });

  it('a closed port is a network error (ECONNREFUSED)', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const err = await failure(api({ baseUrl: `http://127.0.0.1:${port}/api/v1` }).chat('demo-helper', 'hi'));
    expect(err.kind).toBe('network');
    expect(err.message).toContain('ECONNREFUSED');
    // Never sent: safe to try again under any guarantee.
    expect(err.code).toBeUndefined();
  });

  it("the caller's AbortSignal cancels a call in flight, with the caller's reason", async () => {
    emu.hangNext(1);
    const controller = new AbortController();
    const pending = api().chat('demo-helper', 'hi', controller.signal);
    await emu.waitForCalls(1);
    controller.abort();
    const err = await pending.catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(AgentApiError);
    expect((err as Error).name).toBe('AbortError');
  });

  it('an already aborted signal sends nothing', async () => {
    const reason = new Error('shutting down');
    await expect(api().listInstances(AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(emu.calls).toHaveLength(0);
  });

  it('leaves no listener on a long-lived caller signal', async () => {
    const shutdown = new AbortController();
    const add = vi.spyOn(shutdown.signal, 'addEventListener');
    const remove = vi.spyOn(shutdown.signal, 'removeEventListener');
    const a = api({ timeoutMs: 200 });
    await a.chat('demo-helper', 'ok', shutdown.signal);
    emu.failNext(1, { status: 500 });
    await failure(a.chat('demo-helper', 'fails', shutdown.signal));
    emu.hangNext(1);
    await failure(a.chat('demo-helper', 'times out', shutdown.signal));
    expect(add.mock.calls.length).toBeGreaterThanOrEqual(3);
    const added = add.mock.calls.map((c) => c[1]);
    const removed = remove.mock.calls.map((c) => c[1]);
    expect(added.every((listener) => removed.includes(listener))).toBe(true);
  });

  it("a caller's deadline (AbortSignal.timeout) counts as a timeout", async () => {
    emu.hangNext(1);
    const err = await failure(api().addCredential('demo-helper', 'K', 'v1234', AbortSignal.timeout(100)));
    expect(err.kind).toBe('timeout');
  });
});

describe('secrets never reach a message', () => {
  const echoes = [
    `your key ${KEY} is revoked`,
    `cookie ${COOKIE} expired`,
    'session cookie-secret-value-42 unknown',
    `token ${TOKEN} invalid`,
    `header was X-API-Key: ${encodeURIComponent(KEY)}`,
  ];

  it.each(echoes)('JSON error echo: %s', async (echo) => {
    emu.failNext(1, { status: 401, body: { error: echo } });
    const err = await failure(api().chat('demo-helper', 'hi'));
    for (const secret of [KEY, COOKIE, 'cookie-secret-value-42', TOKEN]) expect(err.message).not.toContain(secret);
    expect(err.message).toContain('[REDACTED]');
  });

  it('HTML and plain text echoes, in every call', async () => {
    emu.failNext(1, { status: 500, body: `<html><body><pre>X-API-Key: ${KEY}</pre></body></html>` });
    emu.failNext(1, { status: 403, body: `Cookie: ${COOKIE}; Authorization: Bearer ${TOKEN}` });
    emu.failNext(1, { status: 400, body: { error: 'bad value', detail: 'the-credential-value-xyz' } });
    const a = api();
    const messages = [
      (await failure(a.chat('demo-helper', 'hi'))).message,
      (await failure(a.listInstances())).message,
      (await failure(a.addCredential('demo-helper', 'K', 'the-credential-value-xyz'))).message,
    ];
    for (const m of messages) {
      for (const secret of [KEY, 'cookie-secret-value-42', TOKEN, 'the-credential-value-xyz']) expect(m).not.toContain(secret);
    }
  });

  it('a secret split by the 200-character cut leaves no fragment', async () => {
    emu.failNext(1, { status: 500, body: `${'a'.repeat(190)}${KEY}` });
    const err = await failure(api().chat('demo-helper', 'hi'));
    expect(err.message).not.toContain(KEY.slice(0, 8));
  });

  it('a header value that is not valid HTTP is refused without quoting it', async () => {
    const err = await failure(api({ apiKey: undefined, sessionCookie: 'sid=abc\r\nX-Injected: secret-part' }).listInstances());
    expect(err.kind).toBe('bad_request');
    expect(err.message).not.toContain('secret-part');
    expect(emu.calls).toHaveLength(0);
  });

  it('an API key that is not a valid header value is refused on every call, and a valid one is checked once and sent', async () => {
    const bad = api({ apiKey: 'key\r\nX-Injected: secret-part' });
    for (let i = 0; i < 2; i++) {
      const err = await failure(bad.chat('demo-helper', 'hi'));
      expect(err.kind).toBe('bad_request');
      expect(err.message).not.toContain('secret-part');
    }
    expect(emu.calls).toHaveLength(0);
    const good = api();
    await good.chat('demo-helper', 'one');
    await good.chat('demo-helper', 'two');
    expect(emu.chatCalls()).toHaveLength(2);
  });
});
