/**
 * What Discord's gateway refuses, as rules the emulator's {@link Gateway} applies to each
 * connection: the opcodes and close codes, the payload rate limit (120 per 60 s, then 4008), the
 * IDENTIFY pacing per rate-limit key (`shard_id % max_concurrency`, one per 5 s, else op 9), the
 * shard check (4010) and the order of payloads on a connection (4003, 4005, 4001). Kept apart from
 * the session bookkeeping so each rule can be read against Discord's documentation on its own.
 */
import type { Json } from './payloads.js';

export const OP = { Dispatch: 0, Heartbeat: 1, Identify: 2, Resume: 6, Reconnect: 7, InvalidSession: 9, Hello: 10, HeartbeatAck: 11 };
export const INTENTS = { Guilds: 1 << 0, GuildMessages: 1 << 9, DirectMessages: 1 << 12, MessageContent: 1 << 15 };
/** Close codes that end a session (Discord: a normal close cannot be resumed). */
export const ENDING_CLOSES = new Set([1000, 1001]);
/** Close codes after which Discord says to start a new session (4007 invalid seq, 4009 session timed out). */
export const SESSION_OVER_CLOSES = new Set([4007, 4009]);
/** Gateway versions Discord serves (older ones are closed with 4012). */
export const SERVED_VERSIONS = new Set(['9', '10']);
/** Discord's send limit per connection: 120 payloads per 60 s, then close 4008. */
const SEND_LIMIT = { count: 120, windowMs: 60_000 };
/** Opcodes a client may send. */
const CLIENT_OPS = new Set([1, 2, 3, 4, 6, 8, 31]);

/** A close Discord would send: its code and reason. */
export interface GatewayClose {
  code: number;
  reason: string;
}

/** One connection's payload count over the last 60 s; past 120 Discord closes it with 4008. */
export class PayloadRateLimit {
  private readonly sentAt: number[] = [];

  /** Counts one payload received at `now`; true when it is one too many. */
  exceeded(now: number): boolean {
    this.sentAt.push(now);
    while (this.sentAt.length > 0 && now - this.sentAt[0]! > SEND_LIMIT.windowMs) this.sentAt.shift();
    return this.sentAt.length > SEND_LIMIT.count;
  }
}

/**
 * Discord's IDENTIFY pacing: each rate-limit key (`shard_id % max_concurrency`) may start one
 * session per window (5 s); an IDENTIFY sooner gets op 9 and starts nothing. A refused IDENTIFY does
 * not move the window (not confirmed either way by Discord's docs; the lenient reading).
 */
export class IdentifyPacer {
  private readonly lastIdentify = new Map<number, number>();

  constructor(
    private readonly maxConcurrency: () => number,
    private readonly windowMs: number,
  ) {}

  /** True (and the window starts) when shard `shardId` may IDENTIFY at `now`. */
  admit(shardId: number, now: number): boolean {
    const key = shardId % Math.max(1, this.maxConcurrency());
    const last = this.lastIdentify.get(key);
    if (last !== undefined && now - last < this.windowMs) return false;
    this.lastIdentify.set(key, now);
    return true;
  }
}

/** `shard: [id, count]` of an IDENTIFY ([0, 1] when absent); undefined when Discord would close with 4010. */
export function identifiedShard(d: Json): [number, number] | undefined {
  const shard: [number, number] = Array.isArray(d.shard) ? [Number(d.shard[0]), Number(d.shard[1])] : [0, 1];
  const valid = Number.isInteger(shard[0]) && Number.isInteger(shard[1]) && shard[1] >= 1 && shard[0] >= 0 && shard[0] < shard[1];
  return valid ? shard : undefined;
}

/**
 * The close Discord sends for a payload out of order on its connection: an unknown opcode (4001),
 * a second IDENTIFY/RESUME (4005), anything but a heartbeat before IDENTIFY/RESUME (4003).
 */
export function outOfOrder(op: unknown, authenticated: boolean): GatewayClose | undefined {
  if (typeof op !== 'number' || !CLIENT_OPS.has(op)) return { code: 4001, reason: 'Unknown opcode.' };
  if (op === OP.Heartbeat) return undefined;
  const authenticating = op === OP.Identify || op === OP.Resume;
  if (authenticating && authenticated) return { code: 4005, reason: 'Already authenticated.' };
  if (!authenticating && !authenticated) return { code: 4003, reason: 'Not authenticated.' };
  return undefined;
}
