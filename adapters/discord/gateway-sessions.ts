import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { errorFields } from '../../src/logger.js';
import { luaScript } from '../../src/queue/lua-script.js';
import { redisNowMs } from '../../src/queue/redis-clock.js';

/**
 * How long a shard's session is kept in Redis after its process last wrote it (by Redis's
 * clock). Discord publishes no figure for how long a session whose connection dropped stays
 * resumable ("a short time"; a few minutes in practice). Kept a little long on purpose: a RESUME that comes too late costs one
 * op 9 and a warning, a record dropped too early loses messages Discord still had.
 */
export const SESSION_RECORD_TTL_MS = 180_000;
/** How often each running session's record is written (its sequence, and that its process lives). */
const RENEW_EVERY_MS = 2_000;
/** A record not renewed for this long belongs to a process that is gone (crashed). */
export const STALE_AFTER_MS = 7_000;
/**
 * A message event not handled (a MESSAGE_CREATE discord.js never handed over, an edit whose
 * handling hangs) holds the recorded sequence back this long at most.
 */
const PENDING_LIMIT_MS = 30_000;

/**
 * Events whose handling changes what a waiting question holds (its text, or that it is asked at
 * all): their sequence counts as handled only once that handling settled, as a MESSAGE_CREATE's.
 */
export const TRACKED_CHANGES: ReadonlySet<string> = new Set(['MESSAGE_UPDATE', 'MESSAGE_DELETE', 'MESSAGE_DELETE_BULK']);

/** The pending key of an edit or a deletion (message IDs, the keys of creates, are digits only). */
const changeKey = (shardId: number, s: number) => `change:${shardId}:${s}`;

/** A shard's gateway session, as kept in Redis for whichever process runs the shard next. */
export interface GatewaySession {
  sessionId: string;
  /** Every event up to this sequence number was handled (stored in Redis or dropped on purpose). */
  sequence: number;
  resumeURL: string;
  shardId: number;
  shardCount: number;
  /** When its process last wrote it (ms since the epoch), by that process's clock. */
  writtenAt: number;
  /**
   * When Redis stored it, by Redis's clock (scripts/store-session-1.lua): its age is judged by
   * Redis's clock alone. Absent in a record of an older release.
   */
  storedAt?: number;
  /** Its process stopped (SIGTERM) and closed the connection resumably. */
  stopped?: boolean;
  /**
   * A session of this very process that its shard left for a new one (discord.js identified
   * again after a close such as 4008 or 1000, which may leave the old one resumable).
   */
  earlierHere?: boolean;
}

/**
 * The Redis hash of a shard's sessions (one field per session ID, each written only by the
 * process running it): per shard count too, since another count routes guilds elsewhere.
 */
export function sessionsKey(prefix: string, shardId: number, shardCount: number): string {
  return `${prefix}:discord:gateway-sessions:${shardCount}:${shardId}`;
}

function parse(raw: string | null | undefined): GatewaySession | undefined {
  if (!raw) return undefined;
  try {
    const s = JSON.parse(raw) as Partial<GatewaySession>;
    if (
      typeof s.sessionId === 'string' &&
      typeof s.sequence === 'number' &&
      typeof s.resumeURL === 'string' &&
      typeof s.shardId === 'number' &&
      typeof s.shardCount === 'number' &&
      typeof s.writtenAt === 'number'
    ) {
      return s as GatewaySession;
    }
  } catch {
    // A record from another version: treated as none.
  }
  return undefined;
}

/**
 * How old a record is when Redis's clock says `redisNow`: by Redis's stamp, so two machines'
 * clocks need not agree (an ingress whose clock is minutes ahead of a crashed one's took that
 * one's fresh record for one past Discord's resume window, and never caught up on it). A record
 * of an older release, without the stamp, is judged as before: its writer's clock against this one's.
 */
function ageMs(record: GatewaySession, redisNow: number): number {
  return typeof record.storedAt === 'number' ? redisNow - record.storedAt : Date.now() - record.writtenAt;
}

const storeScript = luaScript('store-session-1.lua');

/** The raw gateway packet discord.js emits as `raw` (op 0 dispatches carry `s` and `t`). */
export interface RawPacket {
  op: number;
  s?: number | null;
  t?: string | null;
  d?: unknown;
}

interface ShardState {
  session: Omit<GatewaySession, 'sequence' | 'writtenAt'>;
  /** Highest sequence received. */
  received: number;
}

/**
 * Keeps each shard's session (id, resume URL, the sequence up to which every message was handled)
 * in Redis, so that the process running the shard after a restart or a crash can RESUME it and
 * get the events sent meanwhile (Discord replays them only on RESUME). A message's sequence, or an
 * edit's or a deletion's, counts as handled once its handling settled, so a crash between receiving
 * it and applying it in Redis leaves it to be replayed. Each session's record is renewed every 2 s; at a READY, the shard's
 * records of other sessions are handed to `onPredecessor`, which waits (`whenGone`) until their
 * process stopped or stopped renewing them, so a process still running (a deploy that starts the
 * new process first) keeps its session.
 */
export class GatewaySessions {
  private readonly shards = new Map<number, ShardState>();
  /** Sessions this process started: never someone else's leftover. */
  private readonly own = new Set<string>();
  /**
   * Message events received and not yet handled: a MESSAGE_CREATE by its message ID, an edit or
   * a deletion by its shard and sequence (changeKey) → shard and sequence.
   */
  private readonly pending = new Map<string, { shardId: number; s: number; at: number }>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: {
      redis: Redis;
      prefix: string;
      logger: Logger;
      onPredecessor: (previous: GatewaySession) => void;
      ttlMs?: number;
      renewEveryMs?: number;
      staleAfterMs?: number;
      /** How long a message not yet handled holds the recorded sequence back. @defaultValue 30 s */
      pendingLimitMs?: number;
    },
  ) {}

  /** Message events (creates, edits, deletions) received whose handling has not settled (and not yet past the limit). */
  get pendingMessages(): number {
    return this.pending.size;
  }

  private get ttlMs(): number {
    return this.deps.ttlMs ?? SESSION_RECORD_TTL_MS;
  }

  /** Every raw packet of the client (`raw` event): READY starts a session, every dispatch moves it on. */
  onPacket(packet: RawPacket, shardId: number, fallbackCount: number): void {
    if (packet.op !== 0 || typeof packet.s !== 'number') return;
    if (packet.t === 'READY') {
      const d = (packet.d ?? {}) as { session_id?: string; resume_gateway_url?: string; shard?: [number, number] };
      if (typeof d.session_id !== 'string' || typeof d.resume_gateway_url !== 'string') return;
      const session = { sessionId: d.session_id, resumeURL: d.resume_gateway_url, shardId, shardCount: d.shard?.[1] ?? fallbackCount };
      const before = this.shards.get(shardId);
      // This process's session before: discord.js identified again (after op 9, or a close such
      // as 4008 or a 1000 from Discord) and the messages sent meanwhile went to the old session
      // only. It is caught up on like a stopped process's; a RESUME Discord refuses says so.
      const left: GatewaySession | undefined = before && {
        ...before.session,
        sequence: this.handledUpTo(shardId, before, false),
        writtenAt: Date.now(),
        stopped: true,
        earlierHere: true,
      };
      this.own.add(session.sessionId);
      this.shards.set(shardId, { session, received: packet.s });
      this.enqueue(async () => {
        const key = sessionsKey(this.deps.prefix, shardId, session.shardCount);
        if (left) {
          // Recorded, so that the next process catches up on it should this one stop first.
          await this.store(left);
          this.deps.onPredecessor(left);
        }
        const redisNow = (await this.write(shardId, false)) ?? (await redisNowMs(this.deps.redis));
        const all = await this.deps.redis.hgetall(key);
        for (const [id, raw] of Object.entries(all)) {
          if (this.own.has(id)) continue;
          const previous = parse(raw);
          if (!previous || ageMs(previous, redisNow) > this.ttlMs) await this.deps.redis.hdel(key, id);
          else this.deps.onPredecessor(previous);
        }
      });
      this.timer ??= setInterval(() => this.renew(), this.deps.renewEveryMs ?? RENEW_EVERY_MS).unref();
      return;
    }
    const state = this.shards.get(shardId);
    if (!state) return;
    state.received = Math.max(state.received, packet.s);
    if (packet.t === 'MESSAGE_CREATE') {
      const id = (packet.d as { id?: unknown } | undefined)?.id;
      if (typeof id === 'string') this.pending.set(id, { shardId, s: packet.s, at: Date.now() });
    } else if (TRACKED_CHANGES.has(packet.t ?? '')) {
      // A crash before an edit or a deletion reached Redis must leave it to be replayed: the
      // next process would otherwise ask the agent the text from before, or a deleted question.
      this.pending.set(changeKey(shardId, packet.s), { shardId, s: packet.s, at: Date.now() });
    }
  }

  /** The handling of an edit or a deletion (sequence `s` of the shard) settled: its sequence may be recorded. */
  changeHandled(shardId: number, s: number): void {
    this.pending.delete(changeKey(shardId, s));
  }

  /** A message's handling settled (stored, or dropped on purpose): its sequence may be recorded. */
  handled(messageId: string): void {
    this.pending.delete(messageId);
  }

  /**
   * Resolves with another process's session once that process is gone: it stopped, or this
   * process has seen its record go unrenewed for STALE_AFTER_MS (crashed). Judged by this
   * process's own elapsed time, never by `writtenAt` against this machine's clock: the writer's
   * may be seconds or minutes off (a VM resumed from pause, a host without NTP), and one ahead
   * would RESUME a session still alive, one behind wait past the minutes Discord keeps it
   * resumable. Undefined when the record went away meanwhile (caught up elsewhere, or expired)
   * or `signal` aborts.
   */
  async whenGone(previous: GatewaySession, signal: AbortSignal): Promise<GatewaySession | undefined> {
    const key = sessionsKey(this.deps.prefix, previous.shardId, previous.shardCount);
    const staleAfter = this.deps.staleAfterMs ?? STALE_AFTER_MS;
    let record: GatewaySession | undefined = previous;
    let unchangedSince = performance.now();
    while (record && !signal.aborted) {
      if (record.stopped) return record;
      const unchangedFor = performance.now() - unchangedSince;
      if (unchangedFor > staleAfter) return record;
      await sleep(Math.min(1_000, staleAfter - unchangedFor + 50), undefined, { signal }).catch(() => {});
      if (signal.aborted) return undefined;
      const next = parse(await this.deps.redis.hget(key, previous.sessionId));
      if (next && (next.storedAt !== record.storedAt || next.writtenAt !== record.writtenAt || next.sequence !== record.sequence)) unchangedSince = performance.now();
      record = next;
    }
    return undefined;
  }

  /** Drops another session's record once it was caught up on (or could not be). */
  async forget(previous: GatewaySession): Promise<void> {
    await this.deps.redis.hdel(sessionsKey(this.deps.prefix, previous.shardId, previous.shardCount), previous.sessionId);
  }

  /** The highest sequence up to which every message of the shard was handled. */
  private handledUpTo(shardId: number, state: ShardState, all: boolean): number {
    if (all) return state.received;
    const now = Date.now();
    let upTo = state.received;
    const limit = this.deps.pendingLimitMs ?? PENDING_LIMIT_MS;
    for (const [id, p] of this.pending) {
      // Past the limit an entry holds nothing back, and one is never `handled` when discord.js
      // emitted no messageCreate for it (a repeated MESSAGE_CREATE of a cached message, a channel
      // it cannot build): forgotten here, or the map would grow for the life of the process.
      if (now - p.at >= limit) this.pending.delete(id);
      else if (p.shardId === shardId) upTo = Math.min(upTo, p.s - 1);
    }
    return upTo;
  }

  /** Writes the shard's record; resolves with Redis's time it was stored at. */
  private async write(shardId: number, final: boolean): Promise<number | undefined> {
    const state = this.shards.get(shardId);
    if (!state) return undefined;
    return this.store({ ...state.session, sequence: this.handledUpTo(shardId, state, final), writtenAt: Date.now(), ...(final ? { stopped: true } : {}) });
  }

  /** Stores a record stamped with Redis's time (HSET and PEXPIRE in one script); resolves with that time. */
  private async store(record: GatewaySession): Promise<number> {
    const key = sessionsKey(this.deps.prefix, record.shardId, record.shardCount);
    // Records are built here, never from a parsed one: none carries a `storedAt` of its own.
    return Number(await storeScript(this.deps.redis, [key], [record.sessionId, JSON.stringify(record), this.ttlMs]));
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    this.writing = this.writing.then(step).catch((err: unknown) => this.deps.logger.warn({ ...errorFields(err) }, 'discord gateway session could not be recorded in Redis'));
    return this.writing;
  }

  private renew(): void {
    void this.enqueue(async () => {
      for (const shardId of this.shards.keys()) await this.write(shardId, false);
    });
  }

  /**
   * Stops renewing. `final`: the connections are closed resumably and every message handled, so
   * each record gets the last sequence received and is marked stopped, for the next process to
   * resume at once.
   */
  async stop(final: boolean): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (final) {
      await this.enqueue(async () => {
        for (const shardId of this.shards.keys()) await this.write(shardId, true);
      });
    } else await this.writing;
  }
}
