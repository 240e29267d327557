/** An instance of the account, as `GET {base_url}/instances` lists it. */
export interface Instance {
  id: string;
  name: string;
  status: string;
  type: string;
}

/** The answer of `POST {base_url}/chat`. */
export interface ChatReply {
  response: string;
  messageId: string;
}

export interface CredentialResult {
  success: boolean;
  key: string;
}

/**
 * The agent service's three endpoints (../shared/agent-chat-api.md). Every method throws
 * `AgentApiError` (src/core/errors.ts) on failure; messages never contain a secret.
 */
export interface AgentApi {
  chat(instanceId: string, message: string, signal?: AbortSignal): Promise<ChatReply>;
  listInstances(signal?: AbortSignal): Promise<Instance[]>;
  addCredential(instanceId: string, key: string, value: string, signal?: AbortSignal): Promise<CredentialResult>;
  /** When the service last answered any call (ms since epoch), for /readyz. */
  lastAnsweredAt(): number | undefined;
}
