import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../playground/spawn-app.js';

const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');
const ENTRY = join(ROOT, 'test', 'logger', 'log-three-lines.ts');
const MESSAGES = ['message answered', 'could not list the instances', 'worker error'];

/** Runs a command to its end; resolves with what it wrote. */
function run(command: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? ROOT, TERM: 'xterm' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

// eslint-disable-next-line no-control-regex -- ANSI colour codes of the pretty output
const stripAnsi = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, '');
const linesOf = (s: string) => s.split(/\r?\n/).filter((l) => l.trim() !== '');

describe('log lines on and off a terminal', () => {
  it('on a terminal (a pseudo-terminal from `script`), one pretty line per entry, errors included', async () => {
    // `script -qec CMD /dev/null` runs CMD with its stdout on a fresh pseudo-terminal.
    const { code, stdout } = await run('script', ['-qec', `${TSX} ${ENTRY}`, '/dev/null']);
    expect(code, stdout).toBe(0);
    const lines = linesOf(stripAnsi(stdout));
    expect(lines, stdout).toHaveLength(3);
    for (const [i, line] of lines.entries()) {
      expect(line).not.toMatch(/^\{/);
      expect(line).toMatch(/^\[\d{2}:\d{2}:\d{2}\] (INFO|WARN|ERROR): /);
      expect(line).toContain(MESSAGES[i]);
    }
    expect(lines[0]).toContain('"conversationId":"web:local:general"');
    // The error's fields stay on its line instead of an indented block below it.
    expect(lines[1]).toContain('"message":"agent service unreachable"');
    expect(lines[2]).toContain('boom\\nwith a second line');
    // Redaction applies on the terminal too.
    expect(stdout).not.toContain('sk-terminal-canary');
    expect(lines[0]).toContain('[REDACTED]');
  }, 60_000);

  it('off a terminal (a pipe), stdout is pure JSON lines and nothing goes to stderr', async () => {
    const { code, stdout, stderr } = await run(TSX, [ENTRY]);
    expect(code, stderr).toBe(0);
    expect(stderr).toBe('');
    const lines = linesOf(stdout);
    expect(lines).toHaveLength(3);
    const parsed = lines.map((l) => JSON.parse(l) as { level: number; msg: string; service: string });
    expect(parsed.map((p) => p.msg)).toEqual(MESSAGES);
    expect(parsed.map((p) => p.level)).toEqual([30, 40, 50]);
    expect(parsed.every((p) => p.service === 'agent-bridge')).toBe(true);
    expect(stdout).not.toContain('sk-terminal-canary');
  }, 60_000);
});
