import type { FeedbackStore } from '../feedback/index.js';
import type { QueueCounts } from '../core/platform-context.js';
import type { SuggestedPromptStore } from '../prompts/suggested-prompts.js';
import type { AgentApi } from '../agent-api/types.js';
import type { AgentAccounts } from '../accounts/agent-accounts.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { BindingStore } from '../bindings/types.js';
import type { Platform } from '../core/conversation.js';
import type { DropLog } from '../diagnostics/drop-log.js';
import type { Logger, SecretRegistry } from '../logger.js';
import type { Quota } from '../quota/quota.js';
import type { CredentialFingerprints } from '../crypto/credential-fingerprints.js';
import type { ArgumentStyle } from './registry.js';

/** Job counts of the chat queue, as `/agent status` shows them. */
export type QueueStats = QueueCounts;

/** Options of `createCommands`: every dependency is passed in. */
export interface CommandsOptions {
  /** The deployment's client (shared mode), also the instance list of callers without a workspace. */
  agentApi: AgentApi;
  /**
   * Whose account pays (AGENT_ACCOUNT_MODE). Its `mode`, not its presence, decides: only
   * `per-workspace` offers `setup` and picks each caller's workspace's account. Absent: shared.
   */
  accounts?: AgentAccounts;
  bindings: BindingStore;
  quota: Quota;
  dropLog: DropLog;
  audit: AuditLog;
  queueStats: () => Promise<QueueStats>;
  /**
   * Messages of a binding channel not finished yet (ChatQueue.unfinishedIn): `bind` and
   * `unbind` tell the admin how many are still answered by the instance they were sent under.
   * Unset: not counted, and said without a number.
   */
  unfinishedIn?: (platform: Platform, channelId: string) => Promise<number>;
  /** Slack assistant suggested prompts per binding (`set prompts`). */
  prompts?: SuggestedPromptStore;
  /** Votes on replies (`feedback`). */
  feedback?: FeedbackStore;
  logger: Logger;
  /**
   * How long `cachedInstances()` (and the instance check of `bind`) reuses a listing.
   * @defaultValue 30000
   */
  instanceCacheMs?: number;
  /**
   * How long `status` waits for the agent service and the queue figures.
   * @defaultValue 3000
   */
  probeTimeoutMs?: number;
  /**
   * How commands are written in replies (Slack's SLACK_COMMAND; Discord's slash command).
   * @defaultValue '/agent'
   */
  commandName?: string;
  /**
   * What the platform calls a workspace, in replies (`workspace`, Discord's `server`).
   * @defaultValue 'workspace'
   */
  workspaceNoun?: string;
  /**
   * How the help text writes arguments: typed words (`bind <instance-id>`) or Discord's named
   * options (`bind instance:<id>`, and no typed-only forms such as `set prompts`).
   * @defaultValue 'words'
   */
  argumentStyle?: ArgumentStyle;
  /**
   * Registry the credential value is added to while its request runs, so the logger redacts it.
   * @defaultValue the process-wide registry of src/logger.ts
   */
  secrets?: SecretRegistry;
  /**
   * Where `credential` records the value's fingerprint before sending it, so every process's
   * worker hides it in answers (src/crypto/credential-fingerprints.ts). Unset: not recorded.
   */
  credentialFingerprints?: Pick<CredentialFingerprints, 'add'>;
  /** Clock, for tests. @defaultValue Date.now */
  now?: () => number;
}

/** The options with defaults applied, as the handler files receive them. */
export interface CommandsDeps
  extends Required<Omit<CommandsOptions, 'secrets' | 'prompts' | 'feedback' | 'accounts' | 'credentialFingerprints' | 'unfinishedIn'>>,
    Pick<CommandsOptions, 'prompts' | 'feedback' | 'accounts' | 'credentialFingerprints' | 'unfinishedIn'> {
  secrets: SecretRegistry;
}
