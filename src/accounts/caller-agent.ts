import type { AgentApi } from '../agent-api/types.js';
import type { Platform } from '../core/conversation.js';
import { AgentApiError } from '../core/errors.js';
import type { AgentAccounts } from './agent-accounts.js';

/** The `code` of the error a workspace without an agent account gets (per-workspace mode). */
export const NO_ACCOUNT_CODE = 'no_account';

/**
 * The agent client of one workspace as an `AgentApi`: each call resolves the workspace's
 * account first, and fails with a coded error (`no_account`) when it has none, so command
 * handlers need no branch of their own for per-workspace mode.
 */
export function workspaceAgent(accounts: AgentAccounts, platform: Platform, workspaceId: string): AgentApi {
  let last: AgentApi | undefined;
  const client = async (): Promise<AgentApi> => {
    const found = await accounts.forWorkspace(platform, workspaceId);
    if (!found) throw new AgentApiError('unauthorized', 'this workspace has no agent account yet', { code: NO_ACCOUNT_CODE });
    return (last = found);
  };
  return {
    chat: async (instanceId, message, signal) => (await client()).chat(instanceId, message, signal),
    listInstances: async (signal) => (await client()).listInstances(signal),
    addCredential: async (instanceId, key, value, signal) => (await client()).addCredential(instanceId, key, value, signal),
    // No account: no session either (the credential form says to run setup first).
    hasSession: async () => {
      const found = await accounts.forWorkspace(platform, workspaceId);
      return found ? ((await found.hasSession?.()) ?? true) : false;
    },
    lastAnsweredAt: () => last?.lastAnsweredAt(),
  };
}
