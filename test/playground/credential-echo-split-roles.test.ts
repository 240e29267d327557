import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebEventStore } from '../../adapters/web/event-store.js';
import { startAgentEmulator, type AgentEmulator } from '../../src/demo/agent-emulator.js';
import { freeLoopbackPort } from '../../src/free-port.js';
import { deleteKeys, dumpKeys, SHARED_REDIS } from '../support/redis-cleanup.js';
import { until } from '../support/until.js';
import { spawnApp, waitForHealth, type RunningApp } from './spawn-app.js';

/**
 * The layout docs/operations.md recommends: an ingress process takes the admin's credential
 * (the playground's form), a worker process posts the agent's answers. The agent has the
 * credential, so it can quote it in any later answer: the worker, which never saw the value,
 * must still post [REDACTED], and neither Redis nor either process's log may hold the value.
 */
describe('a credential added through the ingress, quoted by the agent, posted by a separate worker', () => {
  const prefix = `credecho-${randomUUID().slice(0, 8)}`;
  const VALUE = 'sk-live-CANARYsplit_VALUE-0987654321';
  const INSTANCE = 'inst_echo';
  let agent: AgentEmulator;
  let ingress: RunningApp;
  let worker: RunningApp;
  let ingressUrl: string;
  let startWorker: () => Promise<RunningApp>;
  const workerOutput: string[] = [];
  const redis = new Redis(SHARED_REDIS);

  beforeAll(async () => {
    agent = await startAgentEmulator({
      instances: [{ id: INSTANCE, name: 'Echo', status: 'running', type: 'assistant' }],
      // What an agent (or a prompt injection) does with a credential it holds: repeats it, in
      // the forms models write (plain, in an env line, in code, Markdown-escaped).
      reply: (id) => {
        const v = agent.credentials.get(id)?.get('OPENAI_API_KEY') ?? 'none';
        return `Your key is ${v}. Set OPENAI_API_KEY=${v} or run \`export KEY="${v}"\`; escaped: ${v.replace(/_/g, '\\_')}`;
      },
    });
    const env = (role: string, port: number) => ({
      ROLE: role,
      HTTP_PORT: String(port),
      PLAYGROUND: 'true',
      QUEUE_PREFIX: prefix,
      REDIS_URL: SHARED_REDIS,
      AGENT_API_BASE_URL: agent.baseUrl,
      AGENT_API_KEY: agent.apiKey,
      AGENT_SESSION_COOKIE: agent.sessionCookie,
      LOG_LEVEL: 'debug',
    });
    startWorker = async () => {
      const port = await freeLoopbackPort();
      const app = spawnApp(env('worker', port));
      await waitForHealth(app, `http://127.0.0.1:${port}`);
      return app;
    };
    const ingressPort = await freeLoopbackPort();
    ingress = spawnApp(env('ingress', ingressPort));
    ingressUrl = `http://127.0.0.1:${ingressPort}`;
    [, worker] = await Promise.all([waitForHealth(ingress, ingressUrl), startWorker()]);
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled([ingress?.stop(), worker?.stop()]);
    await agent?.close();
    redis.disconnect();
    await deleteKeys(prefix);
  });

  const who = { channel: 'general', userName: 'Ann' };
  const store = createWebEventStore({ redis, prefix });
  /** Sends a message in #general and resolves with the text of its reply, as posted. */
  const ask = async (text: string) => {
    const messageId = randomUUID();
    expect((await post('messages', { ...who, messageId, text, mention: true })).status).toBe(200);
    const replies = await until(async () => {
      const events = await store.history('general', { count: 50 });
      const texts = events.flatMap((e) => (e.type === 'reply' && e.replyTo === messageId ? [e.text] : []));
      return texts.length > 0 && texts;
    }, 'the worker posted the answer', 30_000);
    return replies.join('\n');
  };

  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${ingressUrl}/playground/api/${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };

  it('posts [REDACTED] for every quoted form; Redis and the logs hold no trace of the value', async () => {
    expect((await post('bind', { ...who, instanceId: INSTANCE, mode: 'all' })).status).toBe(200);
    const added = await post('credential', { ...who, instanceId: INSTANCE, key: 'OPENAI_API_KEY', value: VALUE });
    expect(added.json.reply).toMatchObject({ ok: true });
    expect(agent.credentials.get(INSTANCE)?.get('OPENAI_API_KEY')).toBe(VALUE);

    const posted = await ask('which key do you use?');

    expect(posted).toContain('Your key is [REDACTED].');
    expect(posted).toContain('OPENAI_API_KEY=[REDACTED]');
    expect(posted).toContain('"[REDACTED]"');
    expect(posted).toContain('escaped: [REDACTED]');
    expect(posted).not.toContain('CANARY');

    // Settled: the worker recorded its progress and wrote its log lines.
    await until(() => /message answered/.test(worker.output()), 'the worker logged the answer');
    const dump = await dumpKeys(prefix);
    expect(dump).toContain(':credential-fingerprints');
    expect(dump).not.toContain('CANARY');
    expect(ingress.output()).not.toContain('CANARY');
    expect(worker.output()).not.toContain('CANARY');
  });

  it('a worker started after the credential was added (a restart, a new replica) redacts it too', async () => {
    await until(() => /message answered/.test(worker.output()), 'the first worker answered');
    await worker.stop();
    workerOutput.push(worker.output());
    worker = await startWorker();
    const posted = await ask('and now?');
    expect(posted).toContain('Your key is [REDACTED].');
    expect(posted).not.toContain('CANARY');
    await until(() => /message answered/.test(worker.output()), 'the new worker logged the answer');
    expect(worker.output()).not.toContain('CANARY');
    expect(workerOutput.join('\n')).not.toContain('CANARY');
    expect(await dumpKeys(prefix)).not.toContain('CANARY');
  });

  it('an agent error quoting the value, which the worker logs and files, is redacted there too', async () => {
    agent.failNext(1, { status: 400, body: { error: `instance stopped: OPENAI_API_KEY=${VALUE}` } }, { endpoint: 'chat' });
    const messageId = randomUUID();
    expect((await post('messages', { ...who, messageId, text: 'fail please', mention: true })).status).toBe(200);
    await until(() => /gave up on a message/.test(worker.output()), 'the worker gave up on the message', 30_000);
    await until(async () => (await dumpKeys(prefix)).includes('OPENAI_API_KEY=[REDACTED]'), 'the failure log holds the redacted reason');
    expect(worker.output()).toMatch(/OPENAI_API_KEY=\[REDACTED\]/);
    expect(worker.output()).not.toContain('CANARY');
    expect(await dumpKeys(prefix)).not.toContain('CANARY');
  });
});
