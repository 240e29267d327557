import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CallSignal } from '../../src/agent-api/call-signal.js';

describe('CallSignal', () => {
  afterEach(() => vi.restoreAllMocks());

  it('aborts once: each listener still added runs once, in order, and later ones never run', () => {
    const signal = new CallSignal();
    const calls: string[] = [];
    const first = () => calls.push('first');
    const removed = () => calls.push('removed');
    signal.addEventListener('abort', first);
    signal.addEventListener('abort', first); // the same listener twice is one listener, as with EventTarget
    signal.addEventListener('abort', removed);
    signal.addEventListener('abort', { handleEvent: () => calls.push('object') });
    signal.addEventListener('other', () => calls.push('other type'));
    signal.removeEventListener('abort', removed);
    const reason = new Error('stop');
    signal.abort(reason);
    signal.abort(new Error('again'));
    signal.addEventListener('abort', () => calls.push('too late'));
    expect(calls).toEqual(['first', 'object']);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(reason);
    expect(signal.signal).toBe(signal);
  });

  it('without a reason, the reason is an AbortError, as AbortController gives', () => {
    const signal = new CallSignal();
    signal.abort();
    expect((signal.reason as DOMException).name).toBe('AbortError');
  });

  it('a listener that throws is reported as uncaught and does not stop the others', () => {
    const reported: Array<() => void> = [];
    vi.spyOn(process, 'nextTick').mockImplementation(((fn: () => void) => void reported.push(fn)) as typeof process.nextTick);
    const signal = new CallSignal();
    const after = vi.fn();
    signal.addEventListener('abort', () => {
      throw new Error('listener broke');
    });
    signal.addEventListener('abort', after);
    signal.abort();
    vi.restoreAllMocks();
    expect(after).toHaveBeenCalledOnce();
    expect(reported).toHaveLength(1);
    expect(() => reported[0]!()).toThrow('listener broke');
  });
});

describe('CallSignal with undici', () => {
  let server: Server | undefined;
  let agent: Agent | undefined;
  afterEach(async () => {
    await agent?.destroy();
    server?.closeAllConnections();
    server?.close();
  });

  it("cuts a real request short: undici rejects with the signal's reason and closes the connection", async () => {
    let closed!: () => void;
    const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
    server = createServer((req) => req.socket.once('close', closed)); // never answers
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    agent = new Agent();
    const signal = new CallSignal();
    const call = request(`http://127.0.0.1:${port}/chat`, { method: 'POST', body: '{}', signal, dispatcher: agent });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const reason = new Error('deadline passed');
    signal.abort(reason);
    await expect(call).rejects.toBe(reason);
    await connectionClosed;
  });
});
