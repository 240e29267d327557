import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bridge } from '../../src/app.js';

import { startAgentEmulator, type AgentEmulator } from '../../src/demo/agent-emulator.js';
import { webPlatform } from '../../adapters/web/index.js';
import { createWebEventStore, type WebEventStore } from '../../adapters/web/event-store.js';
import type { StoredWebEvent } from '../../adapters/web/events.js';
import { startTestBridge } from '../support/bridge-harness.js';
import type { LogCapture } from '../support/log-capture.js';
import type { SecretRegistry } from '../../src/logger.js';
import { dumpKeys } from '../support/redis-cleanup.js';

/**
 * Issue 9 in the playground, end to end: the page's JSON API on the real bridge (real Redis, the
 * core worker, the agent emulator), read back from the channel streams the page shows.
 * The playground has no admins (it is local): every name may run every command.
 */
const lastLine = (prompt: string) => prompt.split('\n').at(-1) ?? '';

let bridge: Bridge;
let agent: AgentEmulator;
let events: WebEventStore;
let base: string;
let logs: LogCapture;
let secrets: SecretRegistry;
let close: () => Promise<void>;
const prefix = `pgbeyond-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  agent = await startAgentEmulator({ reply: (_id, message) => `ok: ${lastLine(message).slice(0, 24)}` });
  const t = await startTestBridge({
    prefix,
    agent,
    env: {
      AGENT_SESSION_COOKIE: agent.sessionCookie,
      PLAYGROUND: 'true',
      BINDINGS: 'web:general=demo-helper',
      QUOTA_USER_PER_MINUTE: '2',
      THREAD_CONTEXT_MAX_MESSAGES: '3',
    },
    platforms: [webPlatform],
  });
  ({ bridge, logs, secrets, close } = t);
  events = createWebEventStore({ redis: bridge.redis, prefix: t.config.queue.prefix });
  base = `http://127.0.0.1:${bridge.httpPort}/playground/api`;
});
afterAll(async () => close?.());

async function api(path: string, body: unknown): Promise<Record<string, any>> {
  const res = await fetch(`${base}/${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, any>;
}

/** A chat message from the page; `@agent` addresses the bot. */
async function say(channel: string, userName: string, text: string): Promise<{ messageId: string; result: Record<string, unknown> }> {
  return (await api('messages', { channel, userName, messageId: randomUUID(), text })) as { messageId: string; result: Record<string, unknown> };
}

/** `/agent …` typed in the message box: the answer's lines. */
async function command(channel: string, text: string, userName = 'Ada'): Promise<string> {
  const { reply } = await api('command-text', { channel, userName, text });
  return [reply.title, ...reply.lines, ...((reply.table?.rows ?? []) as string[][]).map((r) => r.join(' | '))].join('\n');
}

/** Waits for an event of the channel's stream (what the page shows) that replies to `messageId`. */
async function eventFor(channel: string, messageId: string, match: (e: StoredWebEvent) => boolean, label: string): Promise<StoredWebEvent> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const found = (await events.history(channel, { count: 500 })).find((e) => 'replyTo' in e && e.replyTo === messageId && match(e));
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${label}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
const eventsFor = async (channel: string, messageId: string) =>
  (await events.history(channel, { count: 500 })).filter((e) => 'replyTo' in e && e.replyTo === messageId).map((e) => e.type);
const text = (e: StoredWebEvent) => ('text' in e ? e.text : '');

const failNextChat = () => agent.failNext(1, { status: 400, body: { error: 'bad request' } }, { endpoint: 'chat' });
const REF = /\(ref ([A-Z0-9]{6})\)/;

describe('issue 9 in the playground', () => {
  it('`why` explains not addressed, over quota and refused (with the ref the user saw); an unbound channel says so', async () => {
    expect((await say('general', 'Ann', 'just chatting')).result).toEqual({ status: 'dropped', reason: 'not_addressed' });
    for (const n of [1, 2]) {
      const m = await say('general', 'Bea', `@agent question ${n}`);
      await eventFor('general', m.messageId, (e) => e.type === 'reply', `answer ${n}`);
    }
    const third = await say('general', 'Bea', '@agent question 3');
    expect(third.result).toEqual({ status: 'dropped', reason: 'over_quota' });
    const quota = await eventFor('general', third.messageId, (e) => e.type === 'notice', 'quota notice');
    expect(text(quota)).toMatch(/^You've reached your limit of 2 messages per minute\. Try again in \d+ seconds?\.$/);
    expect(agent.chatCalls().filter((c) => c.message === 'question 3')).toHaveLength(0);

    failNextChat();
    const refused = await say('general', 'Cy', '@agent refuse this');
    const notice = await eventFor('general', refused.messageId, (e) => e.type === 'notice', 'failure notice');
    const ref = REF.exec(text(notice))![1]!;

    const why = (await command('general', 'why')).split('\n').filter((l) => l.startsWith('•'));
    expect(why).toHaveLength(3);
    expect(why[0]).toMatch(new RegExp(`from \`user-cy\`: the agent service refused the message \\(reference \`${ref}\`\\)`));
    expect(why[1]).toMatch(/from `user-bea`: the sender was over their message quota/);
    expect(why[2]).toMatch(/from `user-ann`: the bot wasn't addressed/);

    expect((await say('random', 'Dee', '@agent hello?')).result).toEqual({ status: 'dropped', reason: 'not_bound' });
    const random = await command('random', 'why');
    expect(random).toContain('This channel is not bound');
    expect(random).toMatch(/from `user-dee`: this channel is not bound to an agent instance/);

    const drops = logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'message dropped');
    expect(drops.map((l) => [l.level, l.reason])).toEqual([
      [20, 'not_addressed'],
      [20, 'over_quota'],
      [20, 'not_bound'],
    ]);
  });

  it('a per-binding quota override applies, and `status` shows the usage', async () => {
    await command('support', 'bind demo-helper');
    expect(await command('support', 'set quota channel-per-day 1')).toMatch(/Quota `channel-per-day` is now 1 message/);
    const first = await say('support', 'Fay', '@agent daily one');
    await eventFor('support', first.messageId, (e) => e.type === 'reply', 'answer');
    const second = await say('support', 'Gus', '@agent daily two');
    expect(second.result).toEqual({ status: 'dropped', reason: 'over_quota' });
    const notice = await eventFor('support', second.messageId, (e) => e.type === 'notice', 'notice');
    expect(text(notice)).toBe("You've reached the limit of 1 message per day in this channel. Try again in 24 hours.");
    expect(await command('support', 'status')).toContain('Messages in this channel: 1 this minute (no limit), 1 of 1 this day.');
    await command('support', 'set quota channel-per-day default');
  });

  it('error policy: reaction shows only the failed mark, silent nothing, reply the words', async () => {
    const cases = [
      ['reaction', ['working', 'done']],
      ['silent', ['working', 'done']],
      ['reply', ['working', 'notice', 'done']],
    ] as const;
    for (const [policy, expected] of cases) {
      await command('support', `set errors ${policy}`);
      failNextChat();
      const m = await say('support', `Err ${policy}`, `@agent fail with ${policy}`);
      const done = await eventFor('support', m.messageId, (e) => e.type === 'done', `${policy} done`);
      expect(await eventsFor('support', m.messageId)).toEqual(expected);
      expect(done).toMatchObject({ outcome: policy === 'silent' ? 'ok' : 'failed' });
    }
  });

  it('the audit log shows bind, unbind, set and credential (key only), newest first', async () => {
    const canary = `sk-pg-canary-${randomUUID()}`;
    await command('random', 'bind demo-poet', 'Ida');
    const cred = await api('credential', { channel: 'random', userName: 'Ida', instanceId: 'demo-helper', key: 'PG_KEY', value: canary });
    expect(cred.reply.ok).toBe(true);
    await command('random', 'unbind', 'Ida');
    const rows = (await command('random', 'audit')).split('\n').filter((l) => l.includes('| random |'));
    expect(rows.map((r) => r.split(' | ')[2])).toEqual(['unbind', 'credential', 'bind']);
    expect(rows[1]).toContain('Ida (user-ida) | credential | random | demo-helper | PG_KEY | ok');
    expect(await dumpKeys(prefix)).not.toContain(canary);
    expect(logs.text).not.toContain(canary);
    // The service may quote the value in a later refusal: still redacted after the request.
    expect(secrets.redact(`instance stopped: PG_KEY=${canary}`)).not.toContain(canary);
  });

  it('logs the port it is ready at as bound (HTTP_PORT=0), not as configured', () => {
    expect(bridge.httpPort).toBeGreaterThan(0);
    expect(logs.matching(/playground ready/)).toEqual([expect.objectContaining({ port: bridge.httpPort })]);
  });

  it('setup under the default AGENT_ACCOUNT_MODE=shared says there is nothing to set up, typed or posted, and stores no key', async () => {
    expect(await command('general', 'setup')).toMatch(/AGENT_ACCOUNT_MODE=shared[\s\S]*nothing to set up here/);
    const canary = `sk-pg-setup-${randomUUID()}`;
    const posted = await api('setup', { channel: 'general', userName: 'Ada', apiKey: canary });
    expect(posted.reply).toMatchObject({ ok: false, lines: [expect.stringContaining('nothing to set up here')] });
    expect(logs.text).not.toContain('agent account setup failed');
    expect(await dumpKeys(prefix)).not.toContain(canary);
  });

  // Known gap (adapters/web): the web reply target has no threadId, and the worker only adds
  // context when `reply.threadId` is set, so `set context thread` does nothing in the playground.
  // Flip to `it` once the web adapter gives its reply targets the channel as the thread.
  it('context thread sends the channel’s recent conversation with the message', async () => {
    await command('support', 'set context thread');
    const first = await say('support', 'Kim', '@agent first point');
    await eventFor('support', first.messageId, (e) => e.type === 'reply', 'answer');
    const next = await say('support', 'Lou', '@agent second point');
    await eventFor('support', next.messageId, (e) => e.type === 'reply', 'answer');
    expect(agent.chatCalls().at(-1)!.message).toMatch(/^Earlier messages in this thread:\n[\s\S]*Kim: first point\nagent \(bot\): ok: first point\n\nNew message from Lou:\nsecond point$/);
  });
});
