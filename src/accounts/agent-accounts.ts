import type { AgentApi, Instance } from '../agent-api/types.js';
import type { Platform } from '../core/conversation.js';
import type { AccountStore, AgentAccount } from './account-store.js';

/** Whose account pays for a workspace's calls (AGENT_ACCOUNT_MODE). */
export type AccountMode = 'shared' | 'per-workspace';

/**
 * Picks the agent-service client for a workspace's calls. `shared`: the deployment's one
 * account (AGENT_API_KEY) for everyone. `per-workspace`: the account the workspace's admin set
 * with `/agent setup`, or none (the message is not sent, nothing is billed).
 */
export interface AgentAccounts {
  readonly mode: AccountMode;
  /** The client for this workspace, or undefined when per-workspace and not set up. */
  forWorkspace(platform: Platform, workspaceId: string): Promise<AgentApi | undefined>;
  /**
   * Checks the account with a listing (a wrong key is refused before anything is stored),
   * stores it and drops this process's cached client. Resolves with the account's instances.
   */
  setUp(platform: Platform, workspaceId: string, account: AgentAccount): Promise<Instance[]>;
  /**
   * Deletes the workspace's own account (the app was uninstalled there): a later install
   * starts without one and is told to run setup, instead of being billed to the old key.
   * Other processes drop their cached client within `cacheMs`.
   */
  forget(platform: Platform, workspaceId: string): Promise<void>;
}

export function sharedAccount(agent: AgentApi): AgentAccounts {
  return {
    mode: 'shared',
    forWorkspace: async () => agent,
    setUp: async () => {
      throw new Error('this deployment uses one agent account (AGENT_ACCOUNT_MODE=shared)');
    },
    forget: async () => {},
  };
}

export interface PerWorkspaceOptions {
  store: AccountStore;
  /** A client for one account: same service, settings and metrics as the shared one would have. */
  clientFor(account: AgentAccount): AgentApi;
  /** Tells the logger's redaction about a key read from the store. */
  onSecret(value: string): void;
  /**
   * How long a process reuses a workspace's client before reading the store again, so a key
   * changed by `/agent setup` in another process takes effect within this time.
   * @defaultValue 30 000 ms
   */
  cacheMs?: number;
  now?: () => number;
}

export function perWorkspaceAccounts(options: PerWorkspaceOptions): AgentAccounts {
  const cacheMs = options.cacheMs ?? 30_000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { at: number; client: AgentApi | undefined }>();
  const keyOf = (platform: Platform, workspaceId: string) => `${platform}:${workspaceId}`;

  return {
    mode: 'per-workspace',
    async forWorkspace(platform, workspaceId) {
      const key = keyOf(platform, workspaceId);
      const hit = cache.get(key);
      if (hit && now() - hit.at < cacheMs) return hit.client;
      const account = await options.store.get(platform, workspaceId);
      if (account) {
        options.onSecret(account.apiKey);
        if (account.sessionToken) options.onSecret(account.sessionToken);
      }
      const client = account ? options.clientFor(account) : undefined;
      if (cache.size > 10_000) cache.clear();
      cache.set(key, { at: now(), client });
      return client;
    },
    async setUp(platform, workspaceId, account) {
      options.onSecret(account.apiKey);
      if (account.sessionToken) options.onSecret(account.sessionToken);
      const instances = await options.clientFor(account).listInstances(AbortSignal.timeout(15_000));
      await options.store.set(platform, workspaceId, account);
      cache.delete(keyOf(platform, workspaceId));
      return instances;
    },
    async forget(platform, workspaceId) {
      await options.store.delete(platform, workspaceId);
      cache.delete(keyOf(platform, workspaceId));
    },
  };
}
