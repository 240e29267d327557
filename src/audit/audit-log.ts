import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Platform } from '../core/conversation.js';

export type AuditAction = 'bind' | 'unbind' | 'set' | 'credential' | 'refused' | 'uninstall';
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
   * Bound on the stream's length (AUDIT_MAX_ENTRIES). Trimming is approximate (`MAXLEN ~`), so the
   * stream may briefly hold up to about a hundred entries more.
   * @defaultValue 10000
   */
  maxEntries?: number;
}

const FIELDS = ['action', 'actor', 'actorName', 'platform', 'workspaceId', 'channelId', 'instanceId', 'key', 'detail', 'outcome', 'at'] as const;

const entrySchema = z.object({
  action: z.enum(['bind', 'unbind', 'set', 'credential', 'refused', 'uninstall']),
  actor: z.string(),
  actorName: z.string().optional(),
  platform: z.enum(['slack', 'discord', 'web']),
  workspaceId: z.string(),
  channelId: z.string(),
  instanceId: z.string().optional(),
  key: z.string().optional(),
  detail: z.string().optional(),
  outcome: z.enum(['ok', 'refused', 'failed']),
  at: z.coerce.number(),
});

/** How far `recent` reads back when a filter skips entries. */
const SCAN_LIMIT = 2000;
const PAGE = 200;

/**
 * Admin actions in the Redis stream `${prefix}:audit`, one flat field per property so
 * `redis-cli XREVRANGE` reads well. Bounded with `XADD MAXLEN ~`.
 */
export function createAuditLog(options: AuditLogOptions): AuditLog {
  const { redis } = options;
  const key = `${options.prefix}:audit`;
  const max = options.maxEntries ?? 10_000;

  function decode(id: string, flat: string[]): StoredAuditEntry | undefined {
    const obj: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) obj[flat[i]!] = flat[i + 1]!;
    const parsed = entrySchema.safeParse(obj);
    return parsed.success ? { id, ...parsed.data } : undefined;
  }

  return {
    async record(entry) {
      const full: AuditEntry = { ...entry, at: entry.at ?? Date.now() };
      const args: string[] = [];
      for (const f of FIELDS) {
        const v = full[f];
        if (v !== undefined && v !== '') args.push(f, String(v));
      }
      await redis.xadd(key, 'MAXLEN', '~', String(max), '*', ...args);
    },

    async recent(n, filter) {
      const want = Math.max(0, Math.floor(n));
      const out: StoredAuditEntry[] = [];
      let end = '+';
      let scanned = 0;
      while (out.length < want && scanned < SCAN_LIMIT) {
        const count = filter ? PAGE : want - out.length;
        const page = (await redis.xrevrange(key, end, '-', 'COUNT', count)) as Array<[string, string[]]>;
        for (const [id, flat] of page) {
          const e = decode(id, flat);
          if (!e) continue;
          if (filter?.platform && e.platform !== filter.platform) continue;
          if (filter?.workspaceId && e.workspaceId !== filter.workspaceId) continue;
          out.push(e);
          if (out.length >= want) break;
        }
        scanned += page.length;
        const last = page[page.length - 1];
        if (!last || page.length < count) break;
        end = `(${last[0]}`;
      }
      return out;
    },
  };
}
