import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { runPlainCommand } from '../../src/commands/dispatch.js';
import { parseCommandText } from '../../src/commands/parse.js';
import { COMMANDS } from '../../src/commands/registry.js';
import type { CommandCaller, CommandReply, ParsedCommand } from '../../src/commands/types.js';
import { DEMO_SESSION_COOKIE } from '../../src/demo/demo-instances.js';
import { startPipeline, type Pipeline } from '../support/pipeline.js';
import { unsafeAgentCalls, NASTY } from './support/agent-paths.js';
import { watchProcessErrors } from './support/guards.js';
import { figures } from './support/ledger.js';

/**
 * The admin command parser and the command handlers (real Redis, the real agent client against
 * the agent emulator) fed odd text: instance IDs and credential keys with slashes, dots, `..`,
 * quotes, unicode, right-to-left marks, emoji, combining marks, control characters and 10,000
 * characters. Every input gets a clear answer; nothing throws or rejects unhandled; no request
 * reaches the agent service with an unescaped path.
 */
let p: Pipeline;
const guard = watchProcessErrors();
const sentIds = new Set<string>();
const caller: CommandCaller = { platform: 'web', workspaceId: 'local', channelId: 'fuzz', userId: 'admin1', userName: 'Admin' };

beforeAll(async () => {
  p = await startPipeline({ AGENT_SESSION_COOKIE: DEMO_SESSION_COOKIE, LOG_LEVEL: 'debug' });
  // Instances whose IDs are themselves odd, so bind and credential get past "unknown instance".
  for (const id of NASTY.filter((s) => s.length < 300 && s.trim() && s !== '.' && s !== '..')) {
    p.agent.instances.push({ id, name: `odd ${id.slice(0, 20)}`, status: 'running', type: 'assistant' });
  }
});
afterAll(async () => {
  guard.stop();
  await p?.close();
});

const oddText = fc.oneof(
  fc.constantFrom(...NASTY),
  fc.string({ unit: 'grapheme', maxLength: 80 }),
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.stringMatching(/^[./%a-z"'\\ ]{0,12}$/),
  fc.array(fc.constantFrom(...NASTY, '/', '..', '.', ' ', '"'), { maxLength: 5 }).map((parts) => parts.join('')),
);

function expectClearReply(r: CommandReply) {
  expect(typeof r.ok).toBe('boolean');
  expect(r.title.trim().length).toBeGreaterThan(0);
  expect(Array.isArray(r.lines)).toBe(true);
  for (const line of r.lines) expect(typeof line).toBe('string');
  expect(r.lines.join(' ').trim().length + (r.table?.rows.length ?? 0)).toBeGreaterThan(0);
}

/** What an adapter does with a parsed command (the credential value comes from a private form). */
async function run(parsed: ParsedCommand, value: string): Promise<CommandReply | undefined> {
  const c = p.bridge.commands;
  if (parsed.name === 'invalid') return { ok: false, title: 'Invalid', lines: [parsed.error] };
  if (parsed.name === 'credential') {
    sentIds.add(parsed.instanceId);
    return c.credential(caller, parsed.instanceId, 'FUZZ_KEY', value);
  }
  if (parsed.name === 'setup') return c.setup(caller, value);
  return runPlainCommand(c, caller, parsed);
}

/** Every command of the table, as typed, plus the forms a user may get wrong. */
const COMMAND_WORDS = COMMANDS.flatMap((entry) => [entry.name, ...(entry.aliases ?? [])]);

describe('admin command parser and handlers on odd input', () => {
  it('parseCommandText: total, and IDs it returns are clean', () => {
    const subcommand = fc.constantFrom('', 'BIND', 'nope', ...COMMAND_WORDS);
    fc.assert(
      fc.property(subcommand, oddText, oddText, (sub, a, b) => {
        for (const text of [`${sub} ${a} ${b}`, `${sub} ${a}`, `${a}`, `  ${sub}\u0000${a}\u202E${b}`]) {
          const parsed = parseCommandText(text);
          expect(parsed.name).toBeTypeOf('string');
          if (parsed.name === 'invalid') expect(parsed.error.trim().length).toBeGreaterThan(0);
          if (parsed.name === 'bind' || parsed.name === 'credential') {
            expect(parsed.instanceId.length).toBeGreaterThan(0);
            expect(Array.from(parsed.instanceId).length).toBeLessThanOrEqual(200);
            // Control and format characters never survive into an ID.
            expect(parsed.instanceId).not.toMatch(/[\p{Cc}\p{Cf}\s]/u);
          }
        }
      }),
      { numRuns: 400 },
    );
    // Non-string input from a sloppy adapter.
    for (const junk of [undefined, null, 42, {}, [], Symbol('x')]) expect(parseCommandText(junk as unknown as string).name).toBeTypeOf('string');
  });

  it('bind and credential with every nasty instance ID and key: clear answers, escaped paths, value never echoed', async () => {
    const value = 'fuzz-secret-value-0451';
    const keys = [...NASTY, 'GOOD_KEY', 'a.b-c_d', 'A'.repeat(128), 'A'.repeat(129)];
    let calls = 0;
    for (const id of NASTY) {
      const bound = await p.bridge.commands.bind(caller, id, 'all');
      expectClearReply(bound);
      sentIds.add(id.trim());
      for (const key of [keys[calls % keys.length]!, 'GOOD_KEY']) {
        const r = await p.bridge.commands.credential(caller, id, key, value);
        expectClearReply(r);
        expect(JSON.stringify(r)).not.toContain(value);
        calls++;
      }
    }
    for (const key of keys) {
      const r = await p.bridge.commands.credential(caller, 'demo-helper', key, value);
      expectClearReply(r);
      expect(JSON.stringify(r)).not.toContain(value);
    }
    sentIds.add('demo-helper');
    const stored = [...p.agent.credentials.entries()].map(([id, m]) => [id, [...m.keys()]] as const);
    const bad = unsafeAgentCalls(p.agent.calls, sentIds);
    figures('fuzz-commands-nasty', {
      ids: NASTY.length,
      keys: keys.length,
      credentialCalls: p.agent.calls.filter((c) => c.endpoint === 'credentials').length,
      storedFor: stored.length,
      unsafePaths: bad.length,
    });
    expect(bad).toEqual([]);
    // Stored under exactly the ID asked for: the path carried it intact.
    for (const [id] of stored) expect(sentIds.has(id)).toBe(true);
    expect(p.logs.text).not.toContain(value);
    expect(guard.errors).toEqual([]);
  }, 60_000);

  it('random command lines run the way an adapter runs them: never a throw, always a clear answer', async () => {
    const value = 'fuzz-random-value-7731';
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('zzz', ...COMMAND_WORDS), oddText, oddText, async (sub, a, b) => {
        const parsed = parseCommandText(`${sub} ${a} ${b}`);
        const reply = await run(parsed, value);
        if (reply) {
          expectClearReply(reply);
          answered++;
        }
        expect(JSON.stringify(reply ?? {})).not.toContain(value);
      }),
      { numRuns: 250 },
    );
    const bad = unsafeAgentCalls(p.agent.calls, sentIds);
    figures('fuzz-commands-random', { runs: 250, answered, agentCalls: p.agent.calls.length, unsafePaths: bad.length });
    expect(bad).toEqual([]);
    expect(p.logs.text).not.toContain(value);
    expect(p.logs.text).not.toContain('command failed');
    expect(guard.errors).toEqual([]);
  }, 120_000);
});
