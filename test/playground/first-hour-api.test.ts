import { describe, expect, it } from 'vitest';
import { openForAll } from '../support/open-for-all.js';
import { post, startHarness, type Harness } from './harness.js';

describe('playground API: what the first hour needs', () => {
  let h: Harness;
  openForAll(async () => (h = await startHarness()));

  const typed = async (text: string) => (await post(h, 'command-text', { channel: 'general', userName: 'Ann', text })).json as {
    reply: { ok: boolean; title: string; lines: string[] };
    credentialFormFor?: string;
  };

  it('POST /setup hands the workspace\'s key to the setup command and never echoes it', async () => {
    const key = 'pg-key-0123456789abcdef';
    const res = await post(h, 'setup', { channel: 'general', userName: 'Ann', apiKey: key, session: 'pg-session-abcdef' });
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.json)).not.toContain(key);
    const call = h.commandCalls.find((c) => c.name === 'setup');
    expect(call?.caller).toMatchObject({ platform: 'web', channelId: 'general' });
    expect(call?.args).toEqual([key, 'pg-session-abcdef']);
    // Typed in the chat, it never takes a key: with one shared account it only explains.
    const typedSetup = await typed('setup sk-oops');
    expect(typedSetup.reply.ok).toBe(false);
    expect(typedSetup.reply.lines.join(' ')).toMatch(/consider it exposed/);
  });

  it('GET /status says whether the queue (Redis) is available, from memory', async () => {
    const res = await fetch(`${h.baseUrl}/playground/api/status`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ queue: 'ok' });
  });

  it('counts messages given up on as "Gave up", not as "Completed"', async () => {
    // What the worker counts (agent_bridge_messages_total): two answered, one given up on.
    h.metrics.messages.inc({ platform: 'web', outcome: 'replied' }, 2);
    h.metrics.messages.inc({ platform: 'web', outcome: 'gave_up' });
    h.failures.push({ ref: 'ABC234', platform: 'web', conversationId: 'web:local:general', instanceId: 'inst_b', reason: 'agent bad_request', at: Date.now() });
    const { counts, failures } = (await (await fetch(`${h.baseUrl}/playground/api/queue`)).json()) as {
      counts: Record<string, number>;
      failures: unknown[];
    };
    expect(counts).toMatchObject({ completed: 2, gaveUp: 1, failed: 1 });
    expect(failures).toHaveLength(1);
    h.failures.length = 0;
    h.metrics.messages.reset();
  });

  it('`credential <id>` opens the form for a known instance and refuses an unknown one with the known IDs', async () => {
    const known = await typed('credential inst_a');
    expect(known.credentialFormFor).toBe('inst_a');
    const unknown = await typed('credential nope');
    expect(unknown.credentialFormFor).toBeUndefined();
    expect(unknown.reply.ok).toBe(false);
    expect(unknown.reply.lines.join(' ')).toMatch(/no instance `nope`\. Known instances: `inst_a`, `inst_b`/);
  });

  it('a wrong value is "Not a valid value"; an unknown word is "Not a command"', async () => {
    expect((await typed('set errors loud')).reply.title).toBe('Not a valid value');
    expect((await typed('frobnicate')).reply.title).toBe('Not a command');
  });

  it('knows every command of the table, and only those, when an argument is wrong', async () => {
    expect((await typed('setup my-key')).reply.title).toBe('Check the command');
    expect((await typed('bind')).reply.title).toBe('Check the command');
    expect((await typed('quota 5')).reply.title).toBe('Not a command');
  });
});
