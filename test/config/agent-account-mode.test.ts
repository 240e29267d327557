import { randomBytes } from 'node:crypto';
import { loadTestConfig } from '../support/config.js';
import { describe, expect, it } from 'vitest';

import { configProblem } from '../support/config-problem.js';

const base = { AGENT_API_BASE_URL: 'https://openhelixai.com/api/v1', SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 'signing-secret' };
const key = randomBytes(32).toString('base64');

const problem = configProblem;

describe('AGENT_ACCOUNT_MODE', () => {
  it('is shared by default, with AGENT_API_KEY required for workers', () => {
    expect(loadTestConfig({ ...base, AGENT_API_KEY: 'key-1234' }).agentAccountMode).toBe('shared');
    expect(problem(base)).toMatch(/AGENT_API_KEY is missing/);
  });

  it('per-workspace: no AGENT_API_KEY, and the encryption key for the stored keys', () => {
    const config = loadTestConfig({ ...base, AGENT_ACCOUNT_MODE: 'per-workspace', INSTALLATION_ENCRYPTION_KEY: key });
    expect(config.agentAccountMode).toBe('per-workspace');
    expect(config.agent?.apiKey).toBeUndefined();
    expect(problem({ ...base, AGENT_ACCOUNT_MODE: 'per-workspace' })).toMatch(/INSTALLATION_ENCRYPTION_KEY is missing \(AGENT_ACCOUNT_MODE=per-workspace.*openssl rand -base64 32/);
  });

  it('per-workspace refuses a deployment-wide AGENT_API_KEY (it would bill the operator for every workspace not set up)', () => {
    expect(problem({ ...base, AGENT_ACCOUNT_MODE: 'per-workspace', INSTALLATION_ENCRYPTION_KEY: key, AGENT_API_KEY: 'key-1234' })).toMatch(
      /AGENT_API_KEY and AGENT_ACCOUNT_MODE=per-workspace exclude each other/,
    );
    expect(problem({ ...base, AGENT_ACCOUNT_MODE: 'everyone' })).toMatch(/AGENT_ACCOUNT_MODE must be shared or per-workspace/);
  });
});
