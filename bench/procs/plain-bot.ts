/**
 * What the bench's plain bots (the floor worker, the Slack peer) share: their settings and the
 * agent call made without the bridge.
 */
import { Agent, request } from 'undici';

/** A setting the bench gave this process; throws when it is missing. */
export function requiredEnv(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is missing`);
  return v;
}

/**
 * `POST /chat` to the agent emulator with X-API-Key (AGENT_API_BASE_URL, AGENT_API_KEY), with
 * the same HTTP client and settings as the bridge's agent client (src/agent-api/agent-pool.ts):
 * undici request, keep-alive, no cap on connections. Resolves with the agent's answer.
 */
export function plainAgentCall(): (instanceId: string, message: string) => Promise<string> {
  const agentUrl = `${requiredEnv('AGENT_API_BASE_URL')}/chat`;
  const apiKey = requiredEnv('AGENT_API_KEY');
  const dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: null, headersTimeout: 0, bodyTimeout: 0 });
  return async (instanceId, message) => {
    const res = await request(agentUrl, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ instanceId, message }),
      dispatcher,
    });
    const { response } = (await res.body.json()) as { response: string };
    if (res.statusCode !== 200) throw new Error(`agent answered ${res.statusCode}`);
    return response;
  };
}
