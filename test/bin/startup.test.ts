import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const tsx = join(process.cwd(), 'node_modules', '.bin', 'tsx');
const main = join(process.cwd(), 'bin', 'agent-bridge.ts');

/** Runs `npm start`'s entry in an empty folder (no .env) with only these variables. */
function start(env: Record<string, string>) {
  return spawnSync(tsx, [main], {
    cwd: mkdtempSync(join(tmpdir(), 'ab-start-')),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
}

describe('start-up failures explain themselves in one line', () => {
  it('the Redis REDIS_URL names not reachable: says so and what to check there', () => {
    const r = start({ REDIS_URL: 'redis://127.0.0.1:6399', HTTP_PORT: '0' });
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    // Not a newcomer's advice to start one on 6379: the operator chose this address.
    expect(lines[0]).toMatch(/^Redis is not reachable at redis:\/\/127\.0\.0\.1:6399 \(REDIS_URL\): check that it runs there .*or fix REDIS_URL$/);
    expect(r.stdout).not.toMatch(/ECONNREFUSED/);
  });

  it('an HTTP_HOST that is not an address of this machine is named, with what to use instead', () => {
    const r = start({ REDIS_URL: 'redis://127.0.0.1:6379', QUEUE_PREFIX: `start-host-${process.pid}`, HTTP_HOST: '192.0.2.1', HTTP_PORT: '0', PLAYGROUND_TOKEN: 'a'.repeat(32) });
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toBe('start-up failed: HTTP_HOST=192.0.2.1 is not an address of this machine: use 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)');
  });

  it('a setting that runs but is likely a mistake is warned about in the log at start-up (AGENT_TIMEOUT_MS under 5 s)', () => {
    const r = start({ AGENT_API_BASE_URL: 'http://127.0.0.1:9/api/v1', AGENT_API_KEY: 'key-1234', AGENT_TIMEOUT_MS: '1000', REDIS_URL: 'redis://127.0.0.1:6399', HTTP_PORT: '0' });
    const warning = r.stdout.split('\n').find((l) => l.includes('AGENT_TIMEOUT_MS is 1000'));
    expect(warning && JSON.parse(warning)).toMatchObject({ level: 40, msg: expect.stringMatching(/under 5 seconds/) });
  });

  it('a wrong setting names the variable and stops before anything starts', () => {
    const r = start({ WORKER_CONCURRENCY: '-3' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/WORKER_CONCURRENCY must be a whole number from 1/);
  });
});
