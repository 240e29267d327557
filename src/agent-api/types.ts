import type { ErrorKind } from '../core/errors.js';

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
  /** The service's ID of the answer, for feedback; absent when the service sent none (or an unusable one). */
  messageId?: string;
}

export interface CredentialResult {
  success: boolean;
  key: string;
}

/**
 * The agent service's three endpoints (../shared/agent-chat-api.md). Every method throws
 * `AgentApiError` (src/core/errors.ts) on failure; messages never contain a secret.
 * When the caller's `signal` aborts, the call rejects with the signal's reason instead
 * (a cancellation is not a failure of the service), except that a `TimeoutError` reason
 * (e.g. `AbortSignal.timeout`) becomes an `AgentApiError` of kind `timeout`.
 */
export interface AgentApi {
  chat(instanceId: string, message: string, signal?: AbortSignal): Promise<ChatReply>;
  listInstances(signal?: AbortSignal): Promise<Instance[]>;
  addCredential(instanceId: string, key: string, value: string, signal?: AbortSignal): Promise<CredentialResult>;
  /**
   * Whether a dashboard session is configured, so `addCredential` can be tried (it may still be
   * refused). Asked before the credential form opens. Absent: unknown, the form opens.
   */
  hasSession?(): Promise<boolean>;
  /** When the service last answered any call (ms since epoch), for /readyz. */
  lastAnsweredAt(): number | undefined;
  /** Calls waiting for a connection and calls in flight in this client's pool (for metrics). */
  calls?(): { waiting: number; inFlight: number };
}

/** The client's operations, one per endpoint. */
export type AgentOperation = 'chat' | 'listInstances' | 'addCredential';

/** Reported after every call that reached the network (for metrics); never carries a secret or message text. */
export interface AgentCallEvent {
  operation: AgentOperation;
  /** The instance addressed (chat, addCredential). */
  instanceId?: string;
  /** HTTP status, when the service answered. */
  status?: number;
  /** Error kind, when the call failed with an AgentApiError. */
  kind?: ErrorKind;
  durationMs: number;
}
