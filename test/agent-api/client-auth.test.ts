import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentFailure } from '../support/expect-error.js';
import { createAgentApi, NO_SESSION_CODE, NO_SESSION_MESSAGE } from '../../src/agent-api/client.js';
import type { AgentCallEvent } from '../../src/agent-api/types.js';
import { startAgentEmulator, type AgentEmulator } from '../../src/demo/agent-emulator.js';

let emu: AgentEmulator;
beforeEach(async () => {
  emu = await startAgentEmulator();
});
afterEach(async () => {
  await emu.close();
});

const failure = agentFailure;

describe('chat', () => {
  it('POSTs {instanceId, message} to {base_url}/chat with X-API-Key and nothing else', async () => {
    const api = createAgentApi(emu.agentConfig({ sessionToken: emu.sessionToken }));
    const reply = await api.chat('demo-helper', 'hello there');
    expect(reply.response).toContain('[Demo Helper] You said:');
    expect(reply.messageId).toBe('msg_1');
    const [call] = emu.calls;
    expect(call).toMatchObject({ method: 'POST', path: '/api/v1/chat' });
    expect(call?.headers['x-api-key']).toBe(emu.apiKey);
    expect(call?.headers['content-type']).toBe('application/json');
    expect(call?.headers.cookie).toBeUndefined();
    expect(call?.headers.authorization).toBeUndefined();
    expect(call?.json).toEqual({ instanceId: 'demo-helper', message: 'hello there' });
    expect(emu.chatCalls()).toEqual([expect.objectContaining({ instanceId: 'demo-helper', message: 'hello there' })]);
  });

  it('fails at once without an API key', async () => {
    const api = createAgentApi(emu.agentConfig({ apiKey: undefined }));
    const err = await failure(api.chat('demo-helper', 'hi'));
    expect(err.kind).toBe('unauthorized');
    expect(err.message).toContain('AGENT_API_KEY');
    expect(emu.calls).toHaveLength(0);
  });

  it('a wrong key is unauthorized and the message says which setting to check', async () => {
    const api = createAgentApi(emu.agentConfig({ apiKey: 'wrong-key-123' }));
    const err = await failure(api.chat('demo-helper', 'hi'));
    expect(err).toMatchObject({ kind: 'unauthorized', status: 401, retryable: false });
    expect(err.message).toBe('agent service answered 401: invalid API key (check AGENT_API_KEY)');
  });

  it('an unknown instance is not_found', async () => {
    const err = await failure(createAgentApi(emu.agentConfig()).chat('nope', 'hi'));
    expect(err).toMatchObject({ kind: 'not_found', status: 404, message: 'agent service answered 404: instance not found' });
  });

  it('reuses the connection across calls (keep-alive)', async () => {
    const api = createAgentApi(emu.agentConfig());
    for (let i = 0; i < 3; i++) {
      await api.chat('demo-helper', `message ${i}`);
      await api.listInstances();
    }
    // undici may open a second socket while the first is being released, but no more.
    const ports = new Set(emu.calls.map((c) => c.remotePort));
    expect(emu.calls).toHaveLength(6);
    expect(ports.size).toBeLessThanOrEqual(2);
  });
});

describe('listInstances', () => {
  it('GETs {base_url}/instances with the API key only, when a key is set', async () => {
    const api = createAgentApi(emu.agentConfig({ sessionToken: emu.sessionToken }));
    const list = await api.listInstances();
    expect(list.map((i) => i.id)).toEqual(['demo-helper', 'demo-poet', 'demo-sleepy']);
    const [call] = emu.calls;
    expect(call).toMatchObject({ method: 'GET', path: '/api/v1/instances', body: '' });
    expect(call?.headers['x-api-key']).toBe(emu.apiKey);
    expect(call?.headers.cookie).toBeUndefined();
    expect(call?.headers.authorization).toBeUndefined();
  });

  it('uses the session cookie, verbatim, when no key is set', async () => {
    const api = createAgentApi(emu.agentConfig({ apiKey: undefined }));
    expect(await api.listInstances()).toHaveLength(3);
    expect(emu.calls[0]?.headers.cookie).toBe(emu.sessionCookie);
    expect(emu.calls[0]?.headers['x-api-key']).toBeUndefined();
  });

  it('uses the session token as a bearer token when no key is set', async () => {
    const api = createAgentApi(emu.agentConfig({ apiKey: undefined, sessionCookie: undefined, sessionToken: emu.sessionToken }));
    expect(await api.listInstances()).toHaveLength(3);
    expect(emu.calls[0]?.headers.authorization).toBe(`Bearer ${emu.sessionToken}`);
    expect(emu.calls[0]?.headers.cookie).toBeUndefined();
  });

  it('fails at once with neither key nor session', async () => {
    const api = createAgentApi(emu.agentConfig({ apiKey: undefined, sessionCookie: undefined }));
    const err = await failure(api.listInstances());
    expect(err.kind).toBe('unauthorized');
    expect(emu.calls).toHaveLength(0);
  });

  it('a wrong session is unauthorized with a hint naming the session settings', async () => {
    const api = createAgentApi(emu.agentConfig({ apiKey: undefined, sessionCookie: 'demo_session=stale-cookie' }));
    const err = await failure(api.listInstances());
    expect(err.kind).toBe('unauthorized');
    expect(err.message).toContain('AGENT_SESSION_COOKIE');
    expect(err.message).not.toContain('stale-cookie');
  });
});

describe('addCredential', () => {
  it('POSTs {key, value} to the host root /api/instances/{id}/credentials with the session only', async () => {
    const api = createAgentApi(emu.agentConfig());
    const result = await api.addCredential('demo-helper', 'OPENAI_API_KEY', 'sk-credential-value');
    expect(result).toEqual({ success: true, key: 'OPENAI_API_KEY' });
    const [call] = emu.calls;
    expect(call).toMatchObject({ method: 'POST', path: '/api/instances/demo-helper/credentials' });
    expect(call?.headers.cookie).toBe(emu.sessionCookie);
    expect(call?.headers['x-api-key']).toBeUndefined();
    expect(call?.headers['content-type']).toBe('application/json');
    expect(call?.json).toEqual({ key: 'OPENAI_API_KEY', value: 'sk-credential-value' });
    expect(emu.credentials.get('demo-helper')?.get('OPENAI_API_KEY')).toBe('sk-credential-value');
  });

  it('sends the bearer token when that is the session', async () => {
    const api = createAgentApi(emu.agentConfig({ sessionCookie: undefined, sessionToken: emu.sessionToken }));
    await api.addCredential('demo-poet', 'K', 'v1234');
    expect(emu.calls[0]?.headers.authorization).toBe(`Bearer ${emu.sessionToken}`);
    expect(emu.calls[0]?.headers['x-api-key']).toBeUndefined();
  });

  it('without a session fails at once with the exact message and no call', async () => {
    const api = createAgentApi(emu.agentConfig({ sessionCookie: undefined }));
    const err = await failure(api.addCredential('demo-helper', 'K', 'value'));
    expect(err.kind).toBe('unauthorized');
    expect(err.message).toBe('adding credentials needs a dashboard session: set AGENT_SESSION_COOKIE');
    expect(err.message).toBe(NO_SESSION_MESSAGE);
    expect(err.code).toBe(NO_SESSION_CODE);
    expect(emu.calls).toHaveLength(0);
  });

  it('URL-encodes the id as one path segment', async () => {
    emu.instances.push({ id: 'a/b', name: 'Slash', status: 'running', type: 'assistant' });
    emu.instances.push({ id: 'x?y#z %', name: 'Odd', status: 'running', type: 'assistant' });
    const api = createAgentApi(emu.agentConfig());
    await api.addCredential('a/b', 'K', 'v1234');
    await api.addCredential('x?y#z %', 'K', 'v1234');
    expect(emu.calls.map((c) => c.path)).toEqual(['/api/instances/a%2Fb/credentials', '/api/instances/x%3Fy%23z%20%25/credentials']);
    expect([...emu.credentials.keys()]).toEqual(['a/b', 'x?y#z %']);
  });

  it.each(['..', '.', ''])('refuses the id %j, which would leave the path, without a call', async (id) => {
    const err = await failure(createAgentApi(emu.agentConfig()).addCredential(id, 'K', 'v'));
    expect(err.kind).toBe('bad_request');
    expect(emu.calls).toHaveLength(0);
  });

  it('an unknown instance is not_found', async () => {
    const err = await failure(createAgentApi(emu.agentConfig()).addCredential('missing', 'K', 'v'));
    expect(err).toMatchObject({ kind: 'not_found', status: 404 });
  });
});

describe('URL derivation', () => {
  function recordingFetch(urls: string[]): typeof fetch {
    return async (input) => {
      urls.push(String(input));
      const body = String(input).endsWith('/instances') ? '[]' : '{"response":"r","messageId":"m1","success":true,"key":"K"}';
      return new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
    };
  }

  it.each([
    ['https://agents.example.com/api/v1', 'https://agents.example.com'],
    ['https://agents.example.com/api/v1/', 'https://agents.example.com'],
    ['http://example.com:8080/gateway/api/v1', 'http://example.com:8080'],
  ])('base %s: chat and list under the base, credentials under the host root', async (baseUrl, root) => {
    const urls: string[] = [];
    const api = createAgentApi({ baseUrl, apiKey: 'k-123', sessionCookie: 's=1234', timeoutMs: 1000, otherTimeoutMs: 1000 }, { fetch: recordingFetch(urls) });
    await api.chat('i1', 'm');
    await api.listInstances();
    await api.addCredential('a/b', 'K', 'v');
    const base = baseUrl.replace(/\/$/, '');
    expect(urls).toEqual([`${base}/chat`, `${base}/instances`, `${root}/api/instances/a%2Fb/credentials`]);
  });
});

describe('observability', () => {
  it('lastAnsweredAt is set by any answer, errors included', async () => {
    const api = createAgentApi(emu.agentConfig());
    expect(api.lastAnsweredAt()).toBeUndefined();
    emu.failNext(1, { status: 500, body: { error: 'boom' } });
    const before = Date.now();
    await failure(api.chat('demo-helper', 'hi'));
    expect(api.lastAnsweredAt()).toBeGreaterThanOrEqual(before);
  });

  it('reports each call to onCall without secrets or text', async () => {
    const events: AgentCallEvent[] = [];
    const api = createAgentApi(emu.agentConfig(), { onCall: (e) => events.push(e) });
    await api.chat('demo-helper', 'hi');
    emu.rateLimitNext(1, 2);
    await failure(api.chat('demo-poet', 'hi'));
    expect(events).toEqual([
      expect.objectContaining({ operation: 'chat', instanceId: 'demo-helper', status: 200, kind: undefined }),
      expect.objectContaining({ operation: 'chat', instanceId: 'demo-poet', status: 429, kind: 'rate_limited' }),
    ]);
    expect(events[0]?.durationMs).toBeGreaterThanOrEqual(0);
  });
});
