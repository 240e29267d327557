import { describe, expect, it } from 'vitest';
import { warnIfAgentUnreachable } from '../../src/agent-api/reachability.js';
import type { AgentApi } from '../../src/agent-api/types.js';
import { AgentApiError } from '../../src/core/errors.js';
import { captureLogger } from '../commands/fakes.js';

/** An agent API whose listing fails with `err`; `answered` says whether any HTTP answer came. */
function failingAgent(err: Error, answered: boolean): AgentApi {
  return {
    listInstances: () => Promise.reject(err),
    lastAnsweredAt: () => (answered ? Date.now() : undefined),
  } as unknown as AgentApi;
}

describe('the start-up check of the agent service', () => {
  it('names AGENT_API_BASE_URL without the user name and password it carries', async () => {
    const { logger, lines } = captureLogger();
    await warnIfAgentUnreachable(failingAgent(new AgentApiError('network', 'fetch failed'), false), 'https://bridge:base-pass-SECRET@agent.test/api/v1', logger);
    const text = lines.join('\n');
    expect(text).toContain('the agent service is not reachable');
    expect(text).toContain('https://agent.test/api/v1');
    expect(text).not.toContain('base-pass-SECRET');
    expect(text).not.toContain('bridge:');
  });
});
