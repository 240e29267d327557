import type { Platform } from './conversation.js';

/** The ingress side of a platform: connects, listens, hands messages to the ingress pipeline. */
export interface Adapter {
  readonly platform: Platform;
  start(): Promise<void>;
  /** Stops taking events. Idempotent. */
  stop(): Promise<void>;
  /** The adapter's own readiness for /readyz (e.g. Discord's shards); absent = no opinion. */
  readiness?(): { ok: boolean; detail: Record<string, unknown> };
}
