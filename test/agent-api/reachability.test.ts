import { describe, expect, it } from 'vitest';
import { AgentBaseUrlError, AgentCredentialRefusedError, checkAgentAtStartUp, listingCredential } from '../../src/agent-api/reachability.js';
import type { AgentApi } from '../../src/agent-api/types.js';
import type { AgentConfig } from '../../src/config/load.js';
import { AgentApiError } from '../../src/core/errors.js';
import { captureLogger } from '../commands/fakes.js';

/** An agent API whose listing fails with `err`; `answered` says whether any HTTP answer came. */
function failingAgent(err: Error, answered: boolean): AgentApi {
  return {
    listInstances: () => Promise.reject(err),
    lastAnsweredAt: () => (answered ? Date.now() : undefined),
  } as unknown as AgentApi;
}

const agent = (over: Partial<AgentConfig>): AgentConfig => ({ baseUrl: 'https://agent.test/api/v1', timeoutMs: 1000, otherTimeoutMs: 1000, maxResponseBytes: 1000, ...over });
const answered = (status: number) => failingAgent(new AgentApiError(status === 401 ? 'unauthorized' : status === 403 ? 'forbidden' : 'server_error', `agent service answered ${status}: key-VALUE-123 not valid`, { status }), true);

describe('the start-up check of the agent service', () => {
  it('names AGENT_API_BASE_URL without the user name and password it carries', async () => {
    const { logger, lines } = captureLogger();
    await checkAgentAtStartUp(failingAgent(new AgentApiError('network', 'fetch failed'), false), { baseUrl: 'https://bridge:base-pass-SECRET@agent.test/api/v1', credential: 'AGENT_API_KEY', logger });
    const text = lines.join('\n');
    expect(text).toContain('the agent service is not reachable');
    expect(text).toContain('https://agent.test/api/v1');
    expect(text).not.toContain('base-pass-SECRET');
    expect(text).not.toContain('bridge:');
  });

  it.each([401, 403])('stops start-up on a %i, naming the setting and how to fix it, never its value', async (status) => {
    const { logger } = captureLogger();
    const check = checkAgentAtStartUp(answered(status), { baseUrl: 'https://agent.test/api/v1', credential: 'AGENT_API_KEY', logger });
    await expect(check).rejects.toBeInstanceOf(AgentCredentialRefusedError);
    const message = await check.catch((err: Error) => err.message);
    expect(message).toContain('AGENT_API_KEY');
    expect(message).toContain(`HTTP ${status}`);
    expect(message).toMatch(/account dashboard/);
    expect(message).not.toContain('key-VALUE-123');
  });

  it('names the session when the listing was made with it', async () => {
    const { logger } = captureLogger();
    const credential = listingCredential({ agentAccountMode: 'shared', agent: agent({ sessionCookie: 'sid=abc' }) });
    expect(credential).toBe('AGENT_SESSION_COOKIE');
    await expect(checkAgentAtStartUp(answered(401), { baseUrl: undefined, credential, logger })).rejects.toThrow(/did not accept AGENT_SESSION_COOKIE .*dashboard session/);
    expect(listingCredential({ agentAccountMode: 'shared', agent: agent({ sessionToken: 't' }) })).toBe('AGENT_SESSION_TOKEN');
  });

  it('per-workspace accounts, or no credential at all: a refusal does not stop start-up', async () => {
    expect(listingCredential({ agentAccountMode: 'per-workspace', agent: agent({ sessionCookie: 'sid=abc' }) })).toBeUndefined();
    expect(listingCredential({ agentAccountMode: 'shared', agent: agent({}) })).toBeUndefined();
    expect(listingCredential({ agentAccountMode: 'shared', agent: undefined })).toBeUndefined();
    const { logger } = captureLogger();
    await expect(checkAgentAtStartUp(answered(401), { baseUrl: undefined, credential: undefined, logger })).resolves.toBeUndefined();
    // The client's own refusal (no credential set) carries no status: not the service's answer.
    const local = failingAgent(new AgentApiError('unauthorized', 'listing instances needs an API key or a dashboard session'), false);
    await expect(checkAgentAtStartUp(local, { baseUrl: undefined, credential: 'AGENT_API_KEY', logger })).resolves.toBeUndefined();
  });

  it.each([500, 503])('a %i: one warning naming the status, and start-up goes on', async (status) => {
    const { logger, lines } = captureLogger();
    await expect(checkAgentAtStartUp(answered(status), { baseUrl: undefined, credential: 'AGENT_API_KEY', logger })).resolves.toBeUndefined();
    expect(lines.filter((l) => l.includes(`answered ${status} to the instance listing at start-up`))).toHaveLength(1);
    expect(lines.join('\n')).not.toContain('key-VALUE-123');
  });

  it('a 404 (not the service API at that address) stops start-up naming AGENT_API_BASE_URL, with or without a credential to blame', async () => {
    const { logger } = captureLogger();
    for (const credential of ['AGENT_API_KEY', undefined]) {
      const check = checkAgentAtStartUp(answered(404), { baseUrl: 'https://agent.test', credential, logger });
      await expect(check).rejects.toBeInstanceOf(AgentBaseUrlError);
      await expect(check).rejects.toThrow('answered 404 for the instance listing at https://agent.test/instances: check AGENT_API_BASE_URL');
    }
  });
});
