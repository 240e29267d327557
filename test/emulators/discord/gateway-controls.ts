/**
 * The Discord emulator's controls over its gateway, for tests: faults Discord's gateway shows
 * (dropped connections, op 7, op 9, zombies, close codes, an unreachable gateway), what
 * `GET /gateway/bot` reports (shards, session starts), and waiting for a state. The base of
 * {@link DiscordEmulator}, which owns the server and builds the gateway; kept apart so the
 * emulator's file holds what users and admins do.
 */
import { EventEmitter } from 'node:events';
import type { Gateway } from './gateway.js';
import type { GatewayStats } from './gateway-stats.js';
import type { GatewayInfo } from './rest.js';

type DispatchArgs = Parameters<Gateway['dispatch']>;

export abstract class GatewayControls extends EventEmitter {
  protected abstract readonly gateway: Gateway;
  protected abstract readonly gatewayInfo: GatewayInfo;
  /** Messages whose next edit is held back ({@link holdNextEdit}), and the edits held. */
  private readonly editsToHold = new Set<string>();
  private readonly heldEdits: DispatchArgs[] = [];

  /**
   * Test-only, no fault of Discord's own gateway: the next edit of this message is dispatched
   * only by {@link releaseHeldEdits}, after whatever was dispatched meanwhile (with the sequence
   * number it is then sent with). The bridge gets two edits of one message newest first, as a
   * hand-over's two connections can hand them over (the older one replayed by the catch-up late).
   */
  holdNextEdit(message: { id?: unknown }): void {
    this.editsToHold.add(String(message.id));
  }

  /** Dispatches the edits held back, in the order they were made; returns how many. */
  releaseHeldEdits(): number {
    const held = this.heldEdits.splice(0);
    for (const args of held) this.gateway.dispatch(...args);
    return held.length;
  }

  /** An author's edit (MESSAGE_UPDATE): dispatched now, unless {@link holdNextEdit} holds it. */
  protected dispatchEdit(...args: DispatchArgs): void {
    if (this.editsToHold.delete(String(args[1].id))) this.heldEdits.push(args);
    else this.gateway.dispatch(...args);
  }

  get gatewayStats(): GatewayStats {
    return this.gateway.stats;
  }

  get gatewayConnected(): boolean {
    return this.gateway.connected;
  }

  /** What `GET /gateway/bot` reports from now on as `session_start_limit` (remaining, reset_after). */
  setSessionStartLimit(limit: { remaining: number; resetAfterMs?: number }): void {
    this.gatewayInfo.sessionStartLimit.remaining = limit.remaining;
    if (limit.resetAfterMs !== undefined) this.gatewayInfo.sessionStartLimit.resetAfterMs = limit.resetAfterMs;
  }

  /** Session starts left, as `GET /gateway/bot` reports them. */
  get sessionStartsRemaining(): number {
    return this.gatewayInfo.sessionStartLimit.remaining;
  }

  /** How long a repeated nonce is dropped from now on (Discord: a few minutes). */
  setNonceWindow(ms: number): void {
    this.gatewayInfo.nonceWindowMs = ms;
  }

  /** Discord's recommended shard count from now on (it grows as the bot joins guilds). */
  setRecommendedShards(shards: number): void {
    this.gatewayInfo.shards = shards;
  }

  /**
   * Cuts the gateway connection of one shard, or of all (no close frame). Events sent until
   * the client resumes are replayed.
   */
  dropConnection(shardId?: number): void {
    this.gateway.drop(shardId);
  }

  /** Op 9 on one shard, or on all: a fresh IDENTIFY (`resumable` false), or a RESUME (true). */
  invalidateSession(shardId?: number, resumable = false): void {
    this.gateway.invalidateSession(shardId, resumable);
  }

  /** Op 7 Reconnect on one shard, or on all: the client reconnects and RESUMEs. */
  requestReconnect(shardId?: number): void {
    this.gateway.requestReconnect(shardId);
  }

  /**
   * The gateway cannot be reached (`true`: every connection is cut as it opens, and the open ones
   * are dropped) or can again (`false`). REST still answers.
   */
  setGatewayReachable(reachable: boolean): void {
    this.gateway.refuseConnections = !reachable;
    if (!reachable) this.gateway.drop();
  }

  /** The next `count` RESUMEs get op 7 (a gateway restart just then) or op 9 `d: true` before any replay. */
  interruptNextResumes(count: number, answer: 'reconnect' | 'invalid-resumable' = 'reconnect'): void {
    this.gateway.interruptNextResumes(count, answer);
  }

  /**
   * Test-only: what the next RESUME's connection is sent (replay, RESUMED, and on) waits for
   * {@link deliverSlowResumes}, as over a slow link; the session is resumed at once, so what is
   * dispatched meanwhile is live for it (not in its replay).
   */
  slowNextResume(): void {
    this.gateway.slowNextResume();
  }

  /** What slow RESUMEs' connections were sent so far arrives, in order. */
  deliverSlowResumes(): void {
    this.gateway.deliverSlowLinks();
  }

  /** The shard's connection goes silent, open but sending nothing (no heartbeat ACK): a zombie. */
  zombify(shardId?: number): void {
    this.gateway.zombify(shardId);
  }

  /** Closes the shard's connections with a close code (4000, 4008…). */
  closeGateway(code: number, shardId?: number): void {
    this.gateway.closeWithCode(code, shardId);
  }

  /** Shard IDs with an open gateway connection. */
  get connectedShards(): number[] {
    return this.gateway.connectedShards;
  }

  /** Sessions of a shard that are not over: connected, or dropped and still resumable. */
  sessionIds(shardId: number): string[] {
    return this.gateway.sessionIds(shardId);
  }

  /** From the next IDENTIFY on, a MessageContent intent is refused with 4014 (or allowed again). */
  setAllowMessageContent(allow: boolean): void {
    this.gateway.setAllowMessageContent(allow);
  }

  /** Resolves with the predicate's first truthy value, re-checked on every emulator change. */
  waitFor<T>(predicate: () => T | undefined | null | false, label: string, timeoutMs = 15_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const value = predicate();
        if (value) {
          cleanup();
          resolve(value);
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for: ${label}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.off('change', check);
      };
      this.on('change', check);
      check();
    });
  }
}
