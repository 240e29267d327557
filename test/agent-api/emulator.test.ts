import { request as httpRequest } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startAgentEmulator, type AgentEmulator } from '../../src/demo/agent-emulator.js';
import { DEMO_API_KEY, DEMO_SESSION_COOKIE, DEMO_SESSION_TOKEN } from '../../src/demo/demo-instances.js';

let emu: AgentEmulator;
beforeEach(async () => {
  emu = await startAgentEmulator();
});
afterEach(async () => {
  await emu.close();
});

async function call(path: string, init: RequestInit & { json?: unknown } = {}) {
  const headers = new Headers(init.headers);
  if (init.json !== undefined) headers.set('content-type', 'application/json');
  const res = await fetch(`${emu.origin}${path}`, {
    ...init,
    headers,
    body: init.json !== undefined ? JSON.stringify(init.json) : init.body,
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body, headers: res.headers };
}

const key = { 'x-api-key': DEMO_API_KEY };
const cookie = { cookie: DEMO_SESSION_COOKIE };
const bearer = { authorization: `Bearer ${DEMO_SESSION_TOKEN}` };

describe('defaults', () => {
  it('listens on 127.0.0.1 with base URL /api/v1 and friendly demo instances and replies', async () => {
    expect(emu.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/);
    expect(emu.agentConfig()).toMatchObject({ baseUrl: emu.baseUrl, apiKey: DEMO_API_KEY, sessionCookie: DEMO_SESSION_COOKIE });
    const list = await call('/api/v1/instances', { headers: key });
    expect(list.body).toEqual([
      { id: 'demo-helper', name: 'Demo Helper', status: 'running', type: 'assistant' },
      { id: 'demo-poet', name: 'Demo Poet', status: 'running', type: 'assistant' },
      { id: 'demo-sleepy', name: 'Demo Sleepy', status: 'stopped', type: 'assistant' },
    ]);
    const helper = await call('/api/v1/chat', { method: 'POST', headers: key, json: { instanceId: 'demo-helper', message: 'hi **there**' } });
    expect(helper.body).toEqual({ response: expect.stringContaining('[Demo Helper] You said:\n> hi **there**'), messageId: 'msg_1' });
    const poet = await call('/api/v1/chat', { method: 'POST', headers: key, json: { instanceId: 'demo-poet', message: 'the sea' } });
    expect(poet.body).toEqual({ response: expect.stringContaining('[Demo Poet]'), messageId: 'msg_2' });
  });

  it('takes its own instances and reply function', async () => {
    await emu.close();
    emu = await startAgentEmulator({
      apiKey: 'k-1',
      instances: [{ id: 'inst_a', name: 'A', status: 'running', type: 'assistant' }],
      reply: (id, message) => `${id}:${message.toUpperCase()}`,
    });
    const res = await call('/api/v1/chat', { method: 'POST', headers: { 'x-api-key': 'k-1' }, json: { instanceId: 'inst_a', message: 'yo' } });
    expect(res.body).toEqual({ response: 'inst_a:YO', messageId: 'msg_1' });
  });
});

describe('auth rules and validation', () => {
  const chat = { instanceId: 'demo-helper', message: 'hi' };

  it('chat needs the API key; a session does not do', async () => {
    expect(await call('/api/v1/chat', { method: 'POST', json: chat })).toMatchObject({ status: 401, body: { error: expect.any(String) } });
    expect((await call('/api/v1/chat', { method: 'POST', headers: { 'x-api-key': 'nope' }, json: chat })).status).toBe(401);
    expect((await call('/api/v1/chat', { method: 'POST', headers: { ...cookie, ...bearer }, json: chat })).status).toBe(401);
    expect((await call('/api/v1/chat', { method: 'POST', headers: key, json: chat })).status).toBe(200);
  });

  it('chat: bad JSON and missing fields are 400, unknown instance 404, a stopped one 409', async () => {
    const post = (body: string) => call('/api/v1/chat', { method: 'POST', headers: { ...key, 'content-type': 'application/json' }, body });
    expect((await post('{not json')).status).toBe(400);
    expect((await post('{"instanceId":"demo-helper"}')).status).toBe(400);
    expect((await post('{"instanceId":"","message":"x"}')).status).toBe(400);
    expect((await post('[1]')).status).toBe(400);
    expect(await post('{"instanceId":"ghost","message":"x"}')).toMatchObject({ status: 404, body: { error: 'instance not found' } });
    expect((await post('{"instanceId":"demo-sleepy","message":"x"}')).status).toBe(409);
  });

  it('holds requests to the spec: JSON Content-Type on POSTs, only the spec\'s body fields, no body on the list, no query', async () => {
    const chatBody = JSON.stringify({ instanceId: 'demo-helper', message: 'hi' });
    const chat = (headers: Record<string, string>, body = chatBody, path = '/api/v1/chat') => call(path, { method: 'POST', headers: { ...key, ...headers }, body });
    expect((await chat({ 'content-type': 'application/json' })).status).toBe(200);
    expect((await chat({ 'content-type': 'application/json; charset=utf-8' })).status).toBe(200);
    expect((await chat({})).status).toBe(415);
    expect((await chat({ 'content-type': 'text/plain' })).status).toBe(415);
    expect((await chat({ 'content-type': 'application/x-www-form-urlencoded' }, 'instanceId=demo-helper&message=hi')).status).toBe(415);
    expect((await chat({ 'content-type': 'application/json' }, JSON.stringify({ instanceId: 'demo-helper', message: 'hi', context: [] }))).status).toBe(400);
    expect((await chat({ 'content-type': 'application/json' }, JSON.stringify({ instanceId: 'demo-helper', message: 5 }))).status).toBe(400);
    expect((await chat({ 'content-type': 'application/json' }, chatBody, '/api/v1/chat?stream=true')).status).toBe(400);
    const credentials = (headers: Record<string, string>, body: unknown) =>
      call('/api/instances/demo-helper/credentials', { method: 'POST', headers: { ...cookie, ...headers }, body: JSON.stringify(body) });
    expect((await credentials({ 'content-type': 'application/json' }, { key: 'K', value: 'v' })).status).toBe(200);
    expect((await credentials({}, { key: 'K', value: 'v' })).status).toBe(415);
    expect((await credentials({ 'content-type': 'application/json' }, { key: 'K', value: 'v', scope: 'all' })).status).toBe(400);
    expect((await call('/api/v1/instances?page=2', { headers: key })).status).toBe(400);
    // fetch sends no body with a GET: node's http does.
    const withBody = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${emu.origin}/api/v1/instances`, { method: 'GET', headers: { ...key, 'content-type': 'application/json' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end('{}');
    });
    expect(withBody).toBe(400);
  });

  it('the list takes the key, the session cookie (among others) or the bearer token', async () => {
    expect((await call('/api/v1/instances', { headers: key })).status).toBe(200);
    expect((await call('/api/v1/instances', { headers: cookie })).status).toBe(200);
    expect((await call('/api/v1/instances', { headers: { cookie: `a=1; ${DEMO_SESSION_COOKIE}; b=2` } })).status).toBe(200);
    expect((await call('/api/v1/instances', { headers: bearer })).status).toBe(200);
    expect((await call('/api/v1/instances', {})).status).toBe(401);
    expect((await call('/api/v1/instances', { headers: { cookie: 'demo_session=wrong' } })).status).toBe(401);
    expect((await call('/api/v1/instances', { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
  });

  it('credentials refuse the key alone and accept a session', async () => {
    const path = '/api/instances/demo-helper/credentials';
    const body = { key: 'GITHUB_TOKEN', value: 'ghp_x' };
    expect(await call(path, { method: 'POST', headers: key, json: body })).toMatchObject({ status: 403, body: { error: 'session required' } });
    expect(await call(path, { method: 'POST', json: body })).toMatchObject({ status: 401, body: { error: 'session required' } });
    expect(await call(path, { method: 'POST', headers: cookie, json: body })).toMatchObject({ status: 200, body: { success: true, key: 'GITHUB_TOKEN' } });
    expect((await call(path, { method: 'POST', headers: bearer, json: { key: 'K2', value: 'v' } })).status).toBe(200);
    expect([...(emu.credentials.get('demo-helper')?.keys() ?? [])]).toEqual(['GITHUB_TOKEN', 'K2']);
    expect((await call(path, { method: 'POST', headers: cookie, json: { key: 'K' } })).status).toBe(400);
    expect((await call('/api/instances/ghost/credentials', { method: 'POST', headers: cookie, json: body })).status).toBe(404);
    expect((await call('/api/instances/%E0%A4%A/credentials', { method: 'POST', headers: cookie, json: body })).status).toBe(400);
  });

  it('unknown paths are 404, wrong methods 405; every request is recorded', async () => {
    expect((await call('/api/v2/chat', { method: 'POST', headers: key, json: {} })).status).toBe(404);
    expect((await call('/api/v1/chat', { headers: key })).status).toBe(405);
    expect(emu.calls.map((c) => [c.method, c.path, c.endpoint])).toEqual([
      ['POST', '/api/v2/chat', undefined],
      ['GET', '/api/v1/chat', 'chat'],
    ]);
  });
});

describe('controllable behaviour', () => {
  const chat = () => call('/api/v1/chat', { method: 'POST', headers: key, json: { instanceId: 'demo-helper', message: 'hi' } });

  it('failNext sends JSON, HTML, text or empty bodies, then normal answers resume', async () => {
    emu.failNext(1, { status: 500, body: { error: 'x' } });
    emu.failNext(1, { status: 503, body: '<html><body>down</body></html>', retryAfter: 5 });
    emu.failNext(1, { status: 502 });
    const a = await chat();
    expect(a).toMatchObject({ status: 500, body: { error: 'x' } });
    expect(a.headers.get('content-type')).toContain('application/json');
    const b = await chat();
    expect(b.headers.get('content-type')).toContain('text/html');
    expect(b.headers.get('retry-after')).toBe('5');
    const c = await chat();
    expect(c).toMatchObject({ status: 502, body: '' });
    expect((await chat()).status).toBe(200);
  });

  it('scopes faults by endpoint and instance', async () => {
    emu.failNext(2, { status: 500 }, { endpoint: 'instances' });
    expect((await chat()).status).toBe(200);
    expect((await call('/api/v1/instances', { headers: key })).status).toBe(500);
    expect(() => emu.failNext(0, { status: 500 })).toThrow(RangeError);
  });

  it('hangNext holds the request until releaseHanging', async () => {
    emu.hangNext(1);
    const pending = chat();
    await emu.waitForCalls(1);
    await expect.poll(() => emu.hangingCount()).toBe(1);
    emu.releaseHanging();
    expect((await pending).status).toBe(200);
  });

  it('close() ends hanging requests at once and is idempotent', async () => {
    emu.hangNext(5);
    const pending = chat().then(
      () => 'answered',
      () => 'failed',
    );
    await emu.waitForCalls(1);
    const started = Date.now();
    await Promise.all([emu.close(), emu.close()]);
    expect(await pending).toBe('failed');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('setDelay delays answers; 0 clears it', async () => {
    emu.setDelay(150);
    let started = Date.now();
    await chat();
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    emu.setDelay(5_000);
    emu.setDelay(0);
    started = Date.now();
    await chat();
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('keeps at most maxCalls recorded calls', async () => {
    await emu.close();
    emu = await startAgentEmulator({ maxCalls: 2 });
    for (let i = 0; i < 4; i++) await call('/api/v1/chat', { method: 'POST', headers: key, json: { instanceId: 'demo-helper', message: `m${i}` } });
    expect(emu.chatCalls().map((c) => c.message)).toEqual(['m2', 'm3']);
  });

  it('waitForCalls rejects when the calls do not come', async () => {
    await expect(emu.waitForCalls(1, undefined, 50)).rejects.toThrow(/expected 1 matching call/);
  });

  it('reset forgets calls, faults and credentials', async () => {
    emu.failNext(3, { status: 500 });
    await chat();
    emu.reset();
    expect(emu.calls).toHaveLength(0);
    expect((await chat()).status).toBe(200);
  });
});

describe('control API', () => {
  // Tests and the stand-alone CLI turn it on; `npm start`'s demo agent runs without it.
  beforeEach(async () => {
    await emu.close();
    emu = await startAgentEmulator({ control: true });
  });

  it('drives faults over HTTP and lists calls', async () => {
    const control = (action: string, json?: unknown) => call(`/__control/${action}`, { method: 'POST', json });
    expect((await control('fail', { count: 2, status: 503, body: 'busy', instanceId: 'demo-poet' })).status).toBe(200);
    expect((await control('rate-limit', { retryAfter: 9, endpoint: 'instances' })).status).toBe(200);
    expect((await control('fail', { status: 'x' })).status).toBe(400);
    expect((await control('nope')).status).toBe(404);
    const poet = await call('/api/v1/chat', { method: 'POST', headers: key, json: { instanceId: 'demo-poet', message: 'x' } });
    expect(poet).toMatchObject({ status: 503, body: 'busy' });
    const list = await call('/api/v1/instances', { headers: key });
    expect(list.status).toBe(429);
    expect(list.headers.get('retry-after')).toBe('9');
    const calls = await call('/__control/calls');
    expect(calls.body).toMatchObject({ calls: [{ path: '/api/v1/chat', instanceId: 'demo-poet' }, { path: '/api/v1/instances' }], hanging: 0 });
    expect(JSON.stringify(calls.body)).not.toContain(DEMO_API_KEY);
    expect((await control('clear')).status).toBe(200);
    expect(emu.calls).toHaveLength(0);
  });

  it('never lists headers or credential values', async () => {
    const body = { key: 'GITHUB_TOKEN', value: 'ghp_very_secret' };
    await call('/api/instances/demo-helper/credentials', { method: 'POST', headers: cookie, json: body });
    const listed = JSON.stringify((await call('/__control/calls')).body);
    expect(listed).toContain('/api/instances/demo-helper/credentials');
    expect(listed).not.toContain('ghp_very_secret');
    expect(listed).not.toContain(DEMO_SESSION_COOKIE);
  });

  it('hang and release over HTTP', async () => {
    await call('/__control/hang', { method: 'POST', json: {} });
    const pending = call('/api/v1/instances', { headers: key });
    await emu.waitForCalls(1);
    await call('/__control/release', { method: 'POST' });
    expect((await pending).status).toBe(200);
  });

  it('is off unless asked for, as npm start runs the demo agent: a cross-origin POST changes nothing', async () => {
    await emu.close();
    // The options bin/agent-bridge.ts passes in demo mode.
    emu = await startAgentEmulator({ apiKey: 'demo-x', sessionCookie: 'demo_session=y' });
    expect((await call('/__control/calls')).status).toBe(404);
    const posted = await call('/__control/fail', {
      method: 'POST',
      headers: { origin: 'http://evil.example', 'content-type': 'text/plain' },
      json: { count: 5, status: 500 },
    });
    expect(posted.status).toBe(404);
    const chat = await call('/api/v1/chat', { method: 'POST', headers: { 'x-api-key': 'demo-x' }, json: { instanceId: 'demo-helper', message: 'hi' } });
    expect(chat.status).toBe(200);
  });
});
