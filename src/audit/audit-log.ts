import type { Redis } from 'ioredis';
import { PLATFORM_NAME } from '../core/conversation.js';
import { z } from 'zod';
import type { Platform } from '../core/conversation.js';

export type AuditAction = 'bind' | 'unbind' | 'set' | 'credential' | 'setup' | 'refused' | 'uninstall';
export type AuditOutcome = 'ok' | 'refused' | 'failed';

/**
 * One admin action. There is deliberately no field for a credential's value: `key` holds
 * the credential's name only.
 */
export interface AuditEntry {
  action: AuditAction;
  /** Platform user ID of whoever acted. */
  actor: string;
  actorName?: string;
  platform: Platform;
  workspaceId: string;
  channelId: string;
  instanceId?: string;
  /** Credential key name (never its value). */
  key?: string;
  /** Short free text, e.g. `mode=all` or the command a refused user tried. */
  detail?: string;
  outcome: AuditOutcome;
  /** ms since epoch */
  at: number;
}

/** An entry as read back, with its stream ID. */
export interface StoredAuditEntry extends AuditEntry {
  id: string;
}

export interface AuditLog {
  record(entry: Omit<AuditEntry, 'at'> & { at?: number }): Promise<void>;
  /** The newest `n` entries (optionally of one platform/workspace), newest first. */
  recent(n: number, filter?: { platform?: Platform; workspaceId?: string }): Promise<StoredAuditEntry[]>;
}

/** Options of {@link createAuditLog}. */
export interface AuditLogOptions {
  redis: Redis;
  prefix: string;
  /**
   * Bound on each workspace's stream (AUDIT_MAX_ENTRIES), and separately on its stream of refused
   * attempts, trimmed exactly (`MAXLEN`).
   * @defaultValue 10000
   */
  maxEntries?: number;
  /**
   * At most {@link REFUSED_PER_WINDOW} refused attempts per person and workspace are written per
   * window; further ones are counted and the count goes into the next entry written.
   * @defaultValue 60000
   */
  refusedWindowMs?: number;
}

const FIELDS = ['action', 'actor', 'actorName', 'platform', 'workspaceId', 'channelId', 'instanceId', 'key', 'detail', 'outcome', 'at'] as const;

const entrySchema = z.object({
  action: z.enum(['bind', 'unbind', 'set', 'credential', 'setup', 'refused', 'uninstall']),
  actor: z.string(),
  actorName: z.string().optional(),
  platform: z.string().regex(PLATFORM_NAME),
  workspaceId: z.string(),
  channelId: z.string(),
  instanceId: z.string().optional(),
  key: z.string().optional(),
  detail: z.string().optional(),
  outcome: z.enum(['ok', 'refused', 'failed']),
  at: z.coerce.number(),
});

/** Refused attempts of one person written per window (a few, so a mistyped retry still shows). */
export const REFUSED_PER_WINDOW = 5;

/** Streams `recent` merges when the filter does not name one workspace. */
const MAX_STREAMS_MERGED = 100;
/** Workspaces remembered in the index (the least recently written are forgotten first). */
const MAX_STREAMS_INDEXED = 10_000;

/**
 * Admin actions in Redis streams, one per workspace or guild (`${prefix}:audit:slack:T1`), with
 * one flat field per property so `redis-cli XREVRANGE` reads well. Refused attempts by
 * non-admins go to a stream of their own per workspace (`…:refused:slack:T1`) and are
 * rate-limited per person: nobody can push real entries out by typing admin commands, in their
 * own workspace or another. Every stream is bounded with `XADD MAXLEN`.
 */
export function createAuditLog(options: AuditLogOptions): AuditLog {
  const { redis } = options;
  const base = `${options.prefix}:audit`;
  const index = `${base}:streams`;
  const max = options.maxEntries ?? 10_000;
  const windowMs = options.refusedWindowMs ?? 60_000;
  const place = (platform: string, workspaceId: string) => `${platform}:${encodeURIComponent(workspaceId)}`;
  const streamKey = (kind: 'actions' | 'refused', where: string) => (kind === 'actions' ? `${base}:${where}` : `${base}:refused:${where}`);

  function decode(id: string, flat: string[]): StoredAuditEntry | undefined {
    const obj: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) obj[flat[i]!] = flat[i + 1]!;
    const parsed = entrySchema.safeParse(obj);
    return parsed.success ? { id, ...parsed.data } : undefined;
  }

  /** The detail of a refused attempt that may be written now, or undefined when it only counts. */
  async function admitRefused(where: string, entry: AuditEntry): Promise<string | undefined> {
    const who = `${where}:${encodeURIComponent(entry.actor)}`;
    const gate = `${base}:refused-gate:${who}`;
    const skipped = `${base}:refused-skipped:${who}`;
    const counted = await redis.multi().set(gate, '0', 'PX', windowMs, 'NX').incr(gate).exec();
    const inWindow = Number(counted?.[1]?.[1] ?? 0);
    if (inWindow > REFUSED_PER_WINDOW) {
      await redis.multi().incr(skipped).pexpire(skipped, windowMs * 10).exec();
      return undefined;
    }
    const count = Number((await redis.getdel(skipped)) ?? 0);
    const detail = entry.detail ?? '';
    return count > 0 ? `${detail} (and ${count} more refused attempt(s) before this one)`.trim() : detail;
  }

  async function readStream(key: string, n: number): Promise<StoredAuditEntry[]> {
    const page = (await redis.xrevrange(key, '+', '-', 'COUNT', n)) as Array<[string, string[]]>;
    return page.flatMap(([id, flat]) => decode(id, flat) ?? []);
  }

  return {
    async record(entry) {
      const full: AuditEntry = { ...entry, at: entry.at ?? Date.now() };
      const where = place(full.platform, full.workspaceId);
      const refused = full.action === 'refused';
      if (refused) {
        const detail = await admitRefused(where, full);
        if (detail === undefined) return;
        full.detail = detail;
      }
      const args: string[] = [];
      for (const f of FIELDS) {
        const v = full[f];
        if (v !== undefined && v !== '') args.push(f, String(v));
      }
      await redis
        .multi()
        // Exact trimming: admin actions are rare, and AUDIT_MAX_ENTRIES is a promise an operator reads.
        .xadd(streamKey(refused ? 'refused' : 'actions', where), 'MAXLEN', String(max), '*', ...args)
        .zadd(index, full.at, where)
        .zremrangebyrank(index, 0, -MAX_STREAMS_INDEXED - 1)
        .exec();
    },

    async recent(n, filter) {
      const want = Math.max(0, Math.floor(n));
      if (want === 0) return [];
      let places: string[];
      if (filter?.platform && filter.workspaceId !== undefined) {
        places = [place(filter.platform, filter.workspaceId)];
      } else {
        places = (await redis.zrevrange(index, 0, MAX_STREAMS_MERGED - 1)).filter((w) => {
          const [platform, ws] = w.split(':') as [string, string];
          return (!filter?.platform || platform === filter.platform) && (filter?.workspaceId === undefined || decodeURIComponent(ws) === filter.workspaceId);
        });
      }
      const pages = await Promise.all(places.flatMap((w) => [readStream(streamKey('actions', w), want), readStream(streamKey('refused', w), want)]));
      return pages
        .flat()
        .sort((a, b) => compareEntries(b, a))
        .slice(0, want);
    },
  };
}

/**
 * Orders entries of different streams by time: their stream IDs (`ms-seq`, Redis's clock), then,
 * for two entries of the same millisecond (the sequence numbers of two streams say nothing about
 * each other), the time each entry was recorded at, then the sequence.
 */
function compareEntries(a: StoredAuditEntry, b: StoredAuditEntry): number {
  const [am, as] = a.id.split('-').map(Number) as [number, number];
  const [bm, bs] = b.id.split('-').map(Number) as [number, number];
  return am - bm || a.at - b.at || as - bs;
}
