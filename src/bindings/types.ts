import type { Platform } from '../core/conversation.js';
import type { QuotaLimits } from '../config/load.js';

/** `mention`: answer when addressed. `all`: answer every message in the channel. */
export type ReplyMode = 'mention' | 'all';
/** What the user sees when the bridge gives up on a message. */
export type ErrorPolicy = 'reply' | 'reaction' | 'silent';
/** `thread`: prefix the message with a bounded transcript of the thread. */
export type ContextMode = 'off' | 'thread';

export interface Binding {
  instanceId: string;
  mode: ReplyMode;
  errorPolicy: ErrorPolicy;
  context: ContextMode;
  /** Per-binding quota overrides; unset fields use the QUOTA_* defaults. */
  quota?: Partial<QuotaLimits>;
  /** `default` from BINDINGS, `admin` from a bind command. */
  source: 'default' | 'admin';
  updatedBy?: string;
  updatedAt?: number;
}

/** What {@link BindingStore.update} did: the binding in force before, and the one it stored. */
export interface BindingChange {
  previous: Binding | undefined;
  /** Undefined when `change` stored nothing. */
  binding: Binding | undefined;
}

/**
 * Channel → instance map. A thread uses its channel's binding; direct messages use their
 * workspace's `dm:<workspace>` (see dm.ts), which falls back to the deployment-wide `dm`.
 */
export interface BindingStore {
  get(platform: Platform, channelId: string): Promise<Binding | undefined>;
  set(platform: Platform, channelId: string, binding: Binding): Promise<void>;
  /**
   * Changes the binding in one step against concurrent changes (two admins, two processes):
   * `change` gets the binding in force and returns the one to store (undefined: store nothing),
   * and is called again if another change landed in between. Returns the binding it replaced
   * and the one stored, so
   * an admin is told what the binding really was, never what another admin's change erased.
   */
  update(platform: Platform, channelId: string, change: (current: Binding | undefined) => Binding | undefined): Promise<BindingChange>;
  /** Removes the binding (a BINDINGS default is masked). Returns the one that was in force, if any. */
  remove(platform: Platform, channelId: string): Promise<Binding | undefined>;
  list(platform?: Platform): Promise<Array<{ platform: Platform; channelId: string; binding: Binding }>>;
}
