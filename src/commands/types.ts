import type { Platform } from '../core/conversation.js';
import type { Instance } from '../agent-api/types.js';
import type { CommandName } from './registry.js';

/** Who ran a command, and where. Adapters check admin rights before calling a handler. */
export interface CommandCaller {
  platform: Platform;
  workspaceId: string;
  channelId: string;
  userId: string;
  userName?: string;
}

/** A platform-neutral answer; adapters render it (Block Kit, Discord message, HTML). */
export interface CommandReply {
  ok: boolean;
  title: string;
  /** Lines of text; `code` spans are written in backticks. */
  lines: string[];
  table?: { columns: string[]; rows: string[][] };
  /**
   * A form's answer whose problem is in none of its fields (the agent service refused the
   * dashboard session): shown on the form as a whole, not next to an input.
   */
  wholeForm?: true;
}

/** Derived from the command table (`COMMANDS` in registry.ts). */
export type { CommandName, ParsedCommand } from './registry.js';

export interface Commands {
  help(): CommandReply;
  instances(caller: CommandCaller): Promise<CommandReply>;
  bind(caller: CommandCaller, instanceId: string, mode?: 'mention' | 'all'): Promise<CommandReply>;
  unbind(caller: CommandCaller): Promise<CommandReply>;
  status(caller: CommandCaller): Promise<CommandReply>;
  /** Calls the service at once (never through the queue). The reply names the key, never the value. */
  credential(caller: CommandCaller, instanceId: string, key: string, value: string): Promise<CommandReply>;
  /**
   * Asked before a platform opens the credential form: the reply that says why it cannot be
   * used here (no dashboard session configured), or undefined to open it. Absent: open it.
   */
  credentialForm?(caller: CommandCaller): Promise<CommandReply | undefined>;
  /** `errors reply|reaction|silent`, `context off|thread`, `quota <user-per-minute|...> <n>`. */
  set(caller: CommandCaller, setting: string, value: string): Promise<CommandReply>;
  why(caller: CommandCaller): Promise<CommandReply>;
  audit(caller: CommandCaller): Promise<CommandReply>;
  /** Per instance: positive/negative votes of the last 7 days and the latest negative replies. */
  feedback(caller: CommandCaller): Promise<CommandReply>;
  /** Records a refused attempt in the audit log and returns the "only admins can …" answer. */
  refuse(caller: CommandCaller, command: CommandName): Promise<CommandReply>;
  /** Instances for autocomplete and pickers, cached for a short time (the caller's workspace's, per-workspace). */
  cachedInstances(caller?: Pick<CommandCaller, 'platform' | 'workspaceId'>): Promise<Instance[]>;
  /**
   * `setup` (AGENT_ACCOUNT_MODE=per-workspace): checks and stores the caller's workspace's agent
   * API key and optional dashboard session, sealed. Called from each platform's private form;
   * the reply never contains either value.
   */
  setup(caller: CommandCaller, apiKey: string, sessionToken?: string): Promise<CommandReply>;
  /** `per-workspace` when `setup` has a form to open; otherwise `setup` only explains (absent: shared). */
  readonly accountMode?: 'shared' | 'per-workspace';
}
