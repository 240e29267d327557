import { describe, expect, it } from 'vitest';
import { agentCommand } from '../../adapters/discord/commands/definition.js';
import { runPlainCommand, type PlainCommand } from '../../src/commands/dispatch.js';
import { parseCommandText } from '../../src/commands/parse.js';
import { helpLines } from '../../src/commands/help-lines.js';
import { COMMANDS, COMMANDS_WITHOUT_OPTIONS, findCommand, type CommandEntry } from '../../src/commands/registry.js';
import type { CommandCaller, CommandReply, Commands } from '../../src/commands/types.js';
import { readSlackManifest } from '../support/slack-manifest.js';

/**
 * The command table is the one place a command is declared: the parser, the help text, the
 * dispatcher and Discord's `/agent` definition each show every entry, in the table's order.
 */
const entries = COMMANDS as readonly CommandEntry[];
const caller: CommandCaller = { platform: 'web', workspaceId: 'local', channelId: 'general', userId: 'u1' };

/** Commands whose every method records its name and arguments. */
function recordingCommands(calls: Array<{ method: string; args: unknown[] }>): Commands {
  return new Proxy({} as Commands, {
    get: (_target, method: string) =>
      (...args: unknown[]): CommandReply | Promise<CommandReply> => {
        calls.push({ method, args });
        const reply = { ok: true, title: method, lines: [] };
        return method === 'help' ? reply : Promise.resolve(reply);
      },
  });
}

describe('the command table', () => {
  it('names each command and alias once, in lower case', () => {
    const words = entries.flatMap((e) => [e.name, ...(e.aliases ?? [])]);
    expect(new Set(words).size).toBe(words.length);
    for (const word of words) expect(word).toBe(word.toLowerCase());
    for (const e of entries) expect(findCommand(e.name.toUpperCase())).toBe(e);
  });

  it('parses every command by its name (or asks for what is missing, quoting its usage)', () => {
    for (const e of entries) {
      const parsed = parseCommandText(e.name);
      if (parsed.name === 'invalid') expect(parsed.error).toContain(`\`${e.name} `);
      else expect(parsed).toEqual({ name: e.name });
    }
    expect(parseCommandText('')).toEqual({ name: 'help' });
    expect(parseCommandText('?')).toEqual({ name: 'help' });
  });

  it('lists every command in the help text, in the table order', () => {
    const lines = helpLines('/ai');
    const usages = entries.flatMap((e) => (e.forms ?? [e]).map((f) => f.usage));
    expect(lines).toHaveLength(usages.length);
    usages.forEach((usage, i) => expect(lines[i]).toMatch(new RegExp(`^\`/ai ${usage.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\`: \\S`)));
  });

  it("speaks each platform's words: a Slack workspace is a Discord server", () => {
    const setup = (agentCommand().options ?? []).find((o) => o.name === 'setup')!;
    expect(setup.description).toBe("Set this server's agent account (opens a private form)");
    expect(helpLines('/agent', 'server').find((l) => l.startsWith('`/agent setup`'))).toContain("this server's own agent-service API key");
    expect(helpLines('/agent').find((l) => l.startsWith('`/agent setup`'))).toContain("this workspace's own agent-service API key");
    expect(helpLines('/agent', 'server').join('\n')).not.toMatch(/\bworkspace\b/);
  });

  it("is Discord's /agent: one subcommand per entry, with its options, within Discord's limits", () => {
    const json = agentCommand();
    const subs = (json.options ?? []) as Array<{ name: string; description: string; options?: Array<{ name: string; required?: boolean; autocomplete?: boolean; max_length?: number }> }>;
    expect(subs.map((s) => s.name)).toEqual(entries.map((e) => e.name));
    expect(subs.length).toBeLessThanOrEqual(25);
    for (const [i, e] of entries.entries()) {
      const sub = subs[i]!;
      expect(sub.description).toBe(e.summary.replace(/\bworkspace\b/g, 'server'));
      expect(Array.from(sub.description).length).toBeLessThanOrEqual(100);
      expect((sub.options ?? []).map((o) => [o.name, o.required ?? false, o.autocomplete ?? false])).toEqual(
        e.options.map((o) => [o.name, o.required ?? false, o.autocompleteInstances ?? false]),
      );
    }
  });

  it('dispatches every command that is not a form to the handler of the same name, with its arguments', async () => {
    const calls: Array<{ method: string; args: unknown[] }> = [];
    const commands = recordingCommands(calls);
    const examples: Record<string, string> = { bind: 'bind inst_a all', set: 'set errors reaction' };
    for (const e of entries.filter((x) => x.run)) {
      const parsed = parseCommandText(examples[e.name] ?? e.name);
      expect(parsed.name).toBe(e.name);
      const reply = await runPlainCommand(commands, caller, parsed as PlainCommand);
      expect(reply.title).toBe(e.name);
      expect(calls.at(-1)?.method).toBe(e.name);
    }
    expect(calls.find((c) => c.method === 'bind')?.args).toEqual([caller, 'inst_a', 'all']);
    expect(calls.find((c) => c.method === 'set')?.args).toEqual([caller, 'errors', 'reaction']);
  });

  it("gives the playground's buttons every command without options, and no form", () => {
    expect(COMMANDS_WITHOUT_OPTIONS).toEqual(entries.filter((e) => e.options.length === 0 && !e.form).map((e) => e.name));
    expect(COMMANDS_WITHOUT_OPTIONS).toEqual(expect.arrayContaining(['instances', 'status', 'why', 'audit', 'help']));
    expect(COMMANDS_WITHOUT_OPTIONS).not.toContain('bind');
    expect(COMMANDS_WITHOUT_OPTIONS).not.toContain('credential');
  });

  it('reads Discord options into the same arguments as the typed text', () => {
    const bind = findCommand('bind')!;
    const set = findCommand('set')!;
    const options = (values: Record<string, string>) => (name: string) => values[name] ?? '';
    expect(bind.readOptions?.(options({ instance: 'inst_a', mode: 'all' }))).toEqual({ instanceId: 'inst_a', mode: 'all' });
    expect(bind.readOptions?.(options({ instance: 'inst_a' }))).toEqual({ instanceId: 'inst_a' });
    expect(bind.readOptions?.(options({ instance: 'inst_a', mode: 'loud' }))).toEqual({ invalid: expect.stringMatching(/mention/) });
    expect(set.readOptions?.(options({ setting: 'quota-user-per-minute', value: '5' }))).toEqual({ setting: 'quota', value: 'user-per-minute 5' });
    expect(findCommand('credential')!.readOptions?.(options({}))).toEqual({ invalid: expect.stringMatching(/Name the instance/) });
  });

  // The Slack app manifests are static files an operator pastes into Slack: they cannot derive
  // from the table. So their usage hint stays generic, pointing to `help` (which lists the table)
  // and naming no other command, and adding a command needs no manifest edit.
  it.each(['manifest.http.yaml', 'manifest.socket-mode.yaml'])("%s's usage hint points to help and names no other command", (file) => {
    const hint = /usage_hint: "([^"]*)"/.exec(readSlackManifest(file))?.[1] ?? '';
    const words = new Set(hint.split(/[^\w?-]+/));
    expect(words, hint).toContain('help');
    for (const e of entries.filter((e) => e.name !== 'help')) {
      for (const word of [e.name, ...(e.aliases ?? [])]) expect(words.has(word), `${word} in ${file}: ${hint}`).toBe(false);
    }
  });
});
