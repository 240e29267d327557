import { BridgeError } from '../core/errors.js';
import { withoutUserinfo } from '../core/url-userinfo.js';
import { errorFields, type Logger } from '../logger.js';
import type { AgentApi } from './types.js';

/**
 * One warning at start-up when the agent service does not answer at all, so a wrong
 * AGENT_API_BASE_URL shows before the first user waits for a reply. Start-up goes on: the
 * service may come up later, and /readyz reports it meanwhile.
 */
export async function warnIfAgentUnreachable(agentApi: AgentApi, configuredUrl: string | undefined, logger: Logger): Promise<void> {
  // Printed without user name and password, which the URL may carry.
  const baseUrl = configuredUrl && withoutUserinfo(configuredUrl);
  try {
    await agentApi.listInstances(AbortSignal.timeout(10_000));
  } catch (err) {
    if (err instanceof BridgeError && err.source === 'agent' && err.status === 404) {
      // Something answers there, but not the service's API: most often the /api/v1 is missing.
      logger.warn(
        { baseUrl, status: 404 },
        'the agent service answered 404 for the instance listing: check AGENT_API_BASE_URL, which includes the path prefix (for example https://openhelixai.com/api/v1)',
      );
      return;
    }
    if (agentApi.lastAnsweredAt() !== undefined) return; // It answered (even a 401): reachable.
    logger.warn(
      { baseUrl, ...errorFields(err) },
      'the agent service is not reachable: check AGENT_API_BASE_URL and the network; messages wait in the queue meanwhile',
    );
  }
}

/** The agent service counts as ready when it answered within the last minute, or answers a listing now. */
export function agentReadiness(agentApi: AgentApi, freshMs = 60_000): () => Promise<boolean> {
  return async () => {
    const last = agentApi.lastAnsweredAt();
    if (last !== undefined && Date.now() - last < freshMs) return true;
    try {
      await agentApi.listInstances(AbortSignal.timeout(3_000));
      return true;
    } catch (err) {
      // Any HTTP answer (even 401) proves the service is reachable.
      return agentApi.lastAnsweredAt() !== undefined && Date.now() - agentApi.lastAnsweredAt()! < freshMs && err !== undefined;
    }
  };
}
