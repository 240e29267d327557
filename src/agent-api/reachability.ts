import { BridgeError } from '../core/errors.js';
import { withoutUserinfo } from '../core/url-userinfo.js';
import { errorFields, type Logger } from '../logger.js';
import type { Config } from '../config/load.js';
import type { AgentApi } from './types.js';

/** Start-up stops here: the agent service refused the credential the bridge was given. */
export class AgentCredentialRefusedError extends Error {
  override name = 'AgentCredentialRefusedError';
}

/** Start-up stops here: something answers at AGENT_API_BASE_URL, but not the service's API. */
export class AgentBaseUrlError extends Error {
  override name = 'AgentBaseUrlError';
}

/**
 * The setting(s) the start-up listing authenticates with (the key, or else the session), when a
 * 401 or 403 proves that setting wrong; undefined when a refusal proves nothing about the
 * process's own settings (per-workspace accounts, no credential configured).
 */
export function listingCredential(config: Pick<Config, 'agentAccountMode' | 'agent'>): string | undefined {
  if (config.agentAccountMode !== 'shared' || !config.agent) return undefined;
  if (config.agent.apiKey) return 'AGENT_API_KEY';
  const session = [config.agent.sessionCookie ? 'AGENT_SESSION_COOKIE' : '', config.agent.sessionToken ? 'AGENT_SESSION_TOKEN' : ''].filter(Boolean);
  return session.length > 0 ? session.join(' and ') : undefined;
}

function refusal(setting: string, status: number): string {
  const what = status === 401 ? 'did not accept' : 'refused access with';
  const fix =
    setting === 'AGENT_API_KEY'
      ? 'check AGENT_API_KEY against the account dashboard (a revoked or mistyped key, or one of another account), or generate a new key there and set it'
      : `set ${setting} to a current dashboard session, or set AGENT_API_KEY`;
  return `the agent service ${what} ${setting} (HTTP ${status} for the instance listing at start-up): ${fix}`;
}

/**
 * The start-up listing. A 401 or 403 to the credential named by `credential` stops start-up:
 * every call would be refused alike, and an operator learns it from the first user instead; so
 * does a 404 (AGENT_API_BASE_URL points at something that is not the service's API). A 5xx gets
 * one warning.
 * A service that does not answer at all gets one warning, so a wrong AGENT_API_BASE_URL shows
 * before the first user waits for a reply; start-up goes on (the service may come up later,
 * and /readyz reports it meanwhile).
 */
export async function checkAgentAtStartUp(
  agentApi: AgentApi,
  options: { baseUrl: string | undefined; credential: string | undefined; logger: Logger },
): Promise<void> {
  const { credential, logger } = options;
  // Printed without user name and password, which the URL may carry.
  const baseUrl = options.baseUrl && withoutUserinfo(options.baseUrl);
  try {
    await agentApi.listInstances(AbortSignal.timeout(10_000));
  } catch (err) {
    const status = err instanceof BridgeError && err.source === 'agent' ? err.status : undefined;
    // Only the service's own answer counts: the client's "no credential set" carries no status.
    if (credential && (status === 401 || status === 403)) throw new AgentCredentialRefusedError(refusal(credential, status));
    if (status === 404) {
      // Something answers there, but not the service's API (most often the /api/v1 is missing):
      // every chat would then fail as "instance not found" and send users to their admins.
      throw new AgentBaseUrlError(
        `the agent service answered 404 for the instance listing at ${baseUrl}/instances: check AGENT_API_BASE_URL, which includes the path prefix (for example https://openhelixai.com/api/v1)`,
      );
    }
    if (status !== undefined && status >= 500) {
      logger.warn(
        { baseUrl, status },
        `the agent service answered ${status} to the instance listing at start-up: it is having trouble; messages are retried and wait in the queue meanwhile`,
      );
      return;
    }
    if (agentApi.lastAnsweredAt() !== undefined) return; // It answered (a 401 with per-workspace accounts, a 4xx): reachable.
    logger.warn(
      { baseUrl, ...errorFields(err) },
      'the agent service is not reachable: check AGENT_API_BASE_URL and the network; messages wait in the queue meanwhile',
    );
  }
}

/** How often /readyz may ask the agent service for a listing while it has not answered. */
export const READINESS_PROBE_EVERY_MS = 5_000;

/**
 * The agent service counts as ready when it answered within the last minute, or answers a listing
 * now. One listing at a time, and at most one per `probeEveryMs`: /readyz needs no credentials, and
 * each probe is a call with the operator's key, so a flood of probes (or many load balancers)
 * must not become a flood of listings on a service that is down or slow, nor use up its rate limit.
 */
export function agentReadiness(
  agentApi: AgentApi,
  freshMs = 60_000,
  options: { probeEveryMs?: number; now?: () => number } = {},
): () => Promise<boolean> {
  const probeEveryMs = options.probeEveryMs ?? READINESS_PROBE_EVERY_MS;
  const now = options.now ?? Date.now;
  let probing: Promise<boolean> | undefined;
  let lastProbe: { at: number; ok: boolean } | undefined;
  const answeredRecently = () => {
    const last = agentApi.lastAnsweredAt();
    return last !== undefined && now() - last < freshMs;
  };
  const probe = async (): Promise<boolean> => {
    try {
      await agentApi.listInstances(AbortSignal.timeout(3_000));
      return true;
    } catch (err) {
      // Any HTTP answer (even 401) proves the service is reachable.
      return answeredRecently() && err !== undefined;
    }
  };
  return async () => {
    if (answeredRecently()) return true;
    if (probing) return probing;
    if (lastProbe && now() - lastProbe.at < probeEveryMs) return lastProbe.ok;
    probing = probe().then((ok) => {
      lastProbe = { at: now(), ok };
      probing = undefined;
      return ok;
    });
    return probing;
  };
}
