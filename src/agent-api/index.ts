export { createAgentApi, NO_SESSION_MESSAGE, type AgentApiOptions } from './client.js';
export { parseRetryAfter, DEFAULT_RETRY_AFTER_MS, MAX_RETRY_AFTER_MS } from './retry-after.js';
export type { AgentApi, AgentCallEvent, AgentOperation, ChatReply, CredentialResult, Instance } from './types.js';
