import type { Express } from 'express';
import type { Redis } from 'ioredis';
import type { Config } from '../config/load.js';
import type { PlatformSettings } from '../config/platform-settings.js';
import type { Logger, SecretRegistry } from '../logger.js';
import type { Ingress } from '../ingress/types.js';
import type { FirstDelivery } from '../ingress/seen-ledger.js';
import type { Commands } from '../commands/types.js';
import type { ArgumentStyle } from '../commands/registry.js';
import type { ReplyPort } from './reply-port.js';
import type { ConversationRef } from './conversation.js';
import type { WithdrawResult } from '../queue/mailbox.js';
import type { ChangeTiming } from '../queue/early-change.js';
import type { EditOutcome, EditTiming } from '../ingress/edited-message.js';
import type { IncomingMessage } from './message.js';
import type { Adapter } from './adapter.js';
import type { Platform } from './conversation.js';
import type { BindingStore } from '../bindings/types.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { FeedbackStore } from '../feedback/index.js';
import type { Metrics } from '../metrics.js';

/** A message the bridge gave up on, as the playground's admin view lists it. */
export interface FailureEntry {
  ref: string;
  platform: Platform;
  conversationId: string;
  instanceId: string;
  reason: string;
  at: number;
}

/** Jobs of the chat queue by state: the one shape `/agent status`, the playground and metrics read. */
export interface QueueCounts {
  waiting: number;
  active: number;
  completed: number;
  failed: number;
  delayed: number;
}

/** Read-only figures of the queue. */
export interface QueueInfo {
  counts(): Promise<QueueCounts>;
  recentFailures(limit: number): Promise<FailureEntry[]>;
}

/**
 * What the composition root hands an adapter factory. Adapters get everything through
 * here (never from globals or the environment), so tests pass their own.
 */
export interface AdapterContext {
  config: Readonly<Config>;
  logger: Logger;
  secrets: SecretRegistry;
  ingress: Ingress;
  /**
   * The ingress's seen ledger: the first delivery of a platform message passes, repeats (a
   * second event for one message, a redelivery, a double submit) do not.
   */
  seen: FirstDelivery;
  commands: Commands;
  /** The shared HTTP server's app (Slack mounts POST /slack/events here). */
  http: Express;
  /**
   * The port the shared HTTP server listens on: HTTP_PORT, or the one the system picked for
   * HTTP_PORT=0. Known once the adapter's `start` runs.
   * @defaultValue HTTP_PORT (contexts built without a server)
   */
  httpPort?(): number;
  /** A general-purpose Redis connection (caches); not for blocking commands. */
  redis: Redis;
  /** This platform's reply port, for ingress-time notices and replies to commands. */
  replyPort: ReplyPort;
  bindings: BindingStore;
  queueInfo: QueueInfo;
  /** Admin actions and lifecycle events (an app uninstalled from a workspace). */
  audit?: AuditLog;
  /** Drops the not-yet-started work of one workspace (an uninstall); resolves with how many queued messages went. */
  dropQueuedWork?(platform: Platform, workspaceId: string): Promise<number>;
  /**
   * Its sender deleted a message before it was answered: the agent is not called for it and
   * nothing is posted for it, unless its answer is recorded already (see Mailbox.withdraw).
   * `timing` (when the message was sent): one not stored yet, sent a moment ago, is withdrawn by
   * the push that stores it (its deletion came first: `kept`).
   */
  withdrawMessage?(conversation: ConversationRef, messageId: string, timing?: ChangeTiming): Promise<WithdrawResult>;
  /**
   * The IDs of a conversation's unfinished messages that start with `prefix`: the "Ask the agent"
   * questions about a message just deleted, to withdraw them too. A scan: for a deletion only.
   */
  queuedIdsStartingWith?(conversation: ConversationRef, prefix: string): Promise<string[]>;
  /**
   * Its sender edited a message (normalised as a new one): until its agent call starts, the
   * agent gets the edited text, or nothing when the edit no longer asks the bot (src/ingress/edited-message.ts).
   * With `timing`, an edit that came before its message is kept for the push that stores it.
   */
  editMessage?(message: IncomingMessage, timing?: EditTiming): Promise<EditOutcome>;
  /** Deletes a workspace's own agent account, if it has one (an uninstall; per-workspace accounts). */
  forgetAccount?(platform: Platform, workspaceId: string): Promise<void>;
  /** Where feedback button clicks are recorded (absent in tests that do not need it). */
  feedback?: FeedbackStore;
  /** The process's metrics (adapters add their own, e.g. Discord's per-shard gauge). */
  metrics?: Metrics;
}

/** What the reply port factory gets: workers build ports without any ingress parts. */
export interface ReplyPortDeps {
  config: Readonly<Config>;
  logger: Logger;
  redis: Redis;
  /** The logger's redaction: tokens a port learns at run time (Slack installations) go here. */
  secrets?: SecretRegistry;
}

/** How a platform's people name things, for replies written in src/ (no platform names there). */
export interface PlatformVocabulary {
  /** What a workspace is called there: `workspace` (Slack), `server` (Discord). */
  workspace: string;
  /** The admin command as users type it (`/agent`, or SLACK_COMMAND). */
  command: string;
  /**
   * How its users give the admin command's arguments, as its help text writes them: typed
   * words, or named options (Discord).
   * @defaultValue 'words'
   */
  arguments?: ArgumentStyle;
  /**
   * Ingress's notices in this platform's own words, where the default wording (mentions, and
   * the admin command named with `command`) does not fit it.
   * @defaultValue the wording of src/ingress/notices.ts
   */
  notices?: {
    /** A user addressed the bot in a channel with no binding. */
    notBound?: string;
    /** A user addressed the bot with no text. */
    empty?: string;
    /** The workspace has no agent account (per-workspace accounts). */
    noAccount?: string;
  };
}

/**
 * One platform, as the composition root sees it. `adapters/<platform>/index.ts` exports one.
 * Workers call only `createReplyPort`; ingress processes call both.
 */
export interface PlatformModule {
  readonly platform: Platform;
  vocabulary(config: Readonly<Config>): PlatformVocabulary;
  createReplyPort(deps: ReplyPortDeps): ReplyPort;
  createAdapter(ctx: AdapterContext): Adapter;
}

/**
 * A platform as the entry point lists it (bin/platforms.ts): its settings, read by the one
 * config loader, and its runtime module, loaded only when it is configured (a Slack-only
 * process never loads discord.js).
 */
export interface PlatformEntry {
  readonly settings: PlatformSettings;
  load(): Promise<PlatformModule>;
}
