import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { errorFields } from '../../src/logger.js';

/**
 * How long a shard's session is kept in Redis after its process last wrote it. Discord publishes
 * no figure for how long a session whose connection dropped stays resumable ("a short time"; a
 * few minutes in practice). Kept a little long on purpose: a RESUME that comes too late costs one
 * op 9 and a warning, a record dropped too early loses messages Discord still had.
 */
export const SESSION_RECORD_TTL_MS = 180_000;
/** How often a changed sequence is written (and an unchanged record's TTL renewed, every TTL/3). */
const FLUSH_EVERY_MS = 1_000;
/** A MESSAGE_CREATE discord.js never handed over (not for us) holds the recorded sequence back this long at most. */
const PENDING_LIMIT_MS = 30_000;

/** A shard's gateway session, as kept in Redis for whichever process runs the shard next. */
export interface GatewaySession {
  sessionId: string;
  /** Every event up to this sequence number was handled (stored in Redis or dropped on purpose). */
  sequence: number;
  resumeURL: string;
  shardId: number;
  shardCount: number;
}

/** The Redis key of a shard's session: per shard count too, since another count routes guilds elsewhere. */
export function sessionKey(prefix: string, shardId: number, shardCount: number): string {
  return `${prefix}:discord:gateway-session:${shardCount}:${shardId}`;
}

function parse(raw: string | null): GatewaySession | undefined {
  if (!raw) return undefined;
  try {
    const s = JSON.parse(raw) as Partial<GatewaySession>;
    if (typeof s.sessionId === 'string' && typeof s.sequence === 'number' && typeof s.resumeURL === 'string' && typeof s.shardId === 'number' && typeof s.shardCount === 'number') {
      return s as GatewaySession;
    }
  } catch {
    // A record from another version: treated as none.
  }
  return undefined;
}

/** The raw gateway packet discord.js emits as `raw` (op 0 dispatches carry `s` and `t`). */
export interface RawPacket {
  op: number;
  s?: number | null;
  t?: string | null;
  d?: unknown;
}

interface ShardState {
  session: GatewaySession;
  /** Highest sequence received. */
  received: number;
  /** The sequence last written, and when. */
  written: number;
  writtenAt: number;
}

/**
 * Keeps each shard's session (id, resume URL, the sequence handled so far) in Redis, so that the
 * process taking the shard over after a restart or a crash can RESUME it and get the events sent
 * meanwhile (Discord replays them only on RESUME). A message's sequence counts as handled once its
 * handling settled, so a crash between receiving a message and storing it leaves it to be replayed.
 * The first READY of a session swaps its record in and hands the record it replaced (another
 * process's session) to `onPredecessor`.
 */
export class GatewaySessions {
  private readonly shards = new Map<number, ShardState>();
  /** Sessions this process started: never someone else's leftover. */
  private readonly own = new Set<string>();
  /** MESSAGE_CREATEs received and not yet handled: message id → shard and sequence. */
  private readonly pending = new Map<string, { shardId: number; s: number; at: number }>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: {
      redis: Pick<Redis, 'set'>;
      prefix: string;
      logger: Logger;
      onPredecessor: (previous: GatewaySession) => void;
      ttlMs?: number;
    },
  ) {}

  private get ttlMs(): number {
    return this.deps.ttlMs ?? SESSION_RECORD_TTL_MS;
  }

  /** Every raw packet of the client (`raw` event): READY starts a session, every dispatch moves it on. */
  onPacket(packet: RawPacket, shardId: number, fallbackCount: number): void {
    if (packet.op !== 0 || typeof packet.s !== 'number') return;
    if (packet.t === 'READY') {
      const d = (packet.d ?? {}) as { session_id?: string; resume_gateway_url?: string; shard?: [number, number] };
      if (typeof d.session_id !== 'string' || typeof d.resume_gateway_url !== 'string') return;
      const session: GatewaySession = {
        sessionId: d.session_id,
        sequence: packet.s,
        resumeURL: d.resume_gateway_url,
        shardId,
        shardCount: d.shard?.[1] ?? fallbackCount,
      };
      this.own.add(session.sessionId);
      this.shards.set(shardId, { session, received: packet.s, written: packet.s, writtenAt: Date.now() });
      this.claim(session);
      this.timer ??= setInterval(() => void this.flush(), FLUSH_EVERY_MS).unref();
      return;
    }
    const state = this.shards.get(shardId);
    if (!state) return;
    state.received = Math.max(state.received, packet.s);
    if (packet.t === 'MESSAGE_CREATE') {
      const id = (packet.d as { id?: unknown } | undefined)?.id;
      if (typeof id === 'string') this.pending.set(id, { shardId, s: packet.s, at: Date.now() });
    }
  }

  /** A message's handling settled (stored, or dropped on purpose): its sequence may be recorded. */
  handled(messageId: string): void {
    this.pending.delete(messageId);
  }

  /** Writes the new session's record at once, taking the one it replaces (SET … GET). */
  private claim(session: GatewaySession): void {
    const key = sessionKey(this.deps.prefix, session.shardId, session.shardCount);
    this.flushing = this.flushing
      .then(async () => {
        const previous = parse(await this.deps.redis.set(key, JSON.stringify(session), 'PX', this.ttlMs, 'GET'));
        if (previous && !this.own.has(previous.sessionId)) this.deps.onPredecessor(previous);
      })
      .catch((err: unknown) => this.deps.logger.warn({ ...errorFields(err), shardId: session.shardId }, 'discord gateway session could not be recorded in Redis'));
  }

  /** The highest sequence up to which every message of the shard was handled. */
  private handledUpTo(shardId: number, state: ShardState, all: boolean): number {
    if (all) return state.received;
    const now = Date.now();
    let upTo = state.received;
    for (const p of this.pending.values()) {
      if (p.shardId === shardId && now - p.at < PENDING_LIMIT_MS) upTo = Math.min(upTo, p.s - 1);
    }
    return upTo;
  }

  /**
   * Writes each shard's record whose sequence moved (or whose TTL is a third gone). `final`: the
   * connections are closed and every message handled, so the last sequence received is recorded.
   */
  flush(final = false): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const now = Date.now();
      for (const [shardId, state] of this.shards) {
        const sequence = this.handledUpTo(shardId, state, final);
        if (!final && sequence === state.written && now - state.writtenAt < this.ttlMs / 3) continue;
        const record: GatewaySession = { ...state.session, sequence };
        try {
          await this.deps.redis.set(sessionKey(this.deps.prefix, shardId, record.shardCount), JSON.stringify(record), 'PX', this.ttlMs);
          state.written = sequence;
          state.writtenAt = now;
        } catch (err) {
          this.deps.logger.warn({ ...errorFields(err), shardId }, 'discord gateway session could not be recorded in Redis');
        }
      }
    });
    return this.flushing;
  }

  /** Stops writing; with `final`, writes the last records first (see `flush`). */
  async stop(final: boolean): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (final) await this.flush(true);
    else await this.flushing;
  }
}
