import type { Redis } from 'ioredis';
import type { Platform } from '../core/conversation.js';
import type { QuotaLimits } from '../config/load.js';

export type QuotaScope = 'user' | 'channel';
export type QuotaWindow = 'minute' | 'day';

/** What {@link Quota.consume} answers. On refusal: which limit was hit and when its window resets. */
export type QuotaResult =
  | { ok: true }
  | { ok: false; scope: QuotaScope; window: QuotaWindow; limit: number; retryAfterMs: number };

export interface QuotaRequest {
  platform: Platform;
  channelId: string;
  userId: string;
  /** The binding's overrides; unset fields use the defaults. */
  overrides?: Partial<QuotaLimits>;
}

export interface QuotaUsage {
  /** Messages counted in the channel's current minute and day windows. */
  minute: number;
  day: number;
  /** Limits in force for the channel (0 = unlimited). */
  limits: QuotaLimits;
}

export interface Quota {
  /** Counts one message against all four limits, atomically: nothing is counted when any limit is hit. */
  consume(request: QuotaRequest): Promise<QuotaResult>;
  usage(channel: { platform: Platform; channelId: string; overrides?: Partial<QuotaLimits> }): Promise<QuotaUsage>;
}

/** Options of {@link createQuota}. */
export interface QuotaOptions {
  redis: Redis;
  prefix: string;
  /** QUOTA_* settings; 0 = unlimited. */
  defaults: QuotaLimits;
  /**
   * Window lengths; tests shorten them.
   * @defaultValue `{ minute: 60_000, day: 86_400_000 }`
   */
  windowMs?: { minute?: number; day?: number };
}

/**
 * KEYS: user minute, user day, channel minute, channel day. ARGV: the four limits, then the four
 * window lengths (ms). A window opens with its first message and ends when its key expires.
 * Returns {0} when counted, or {index of the limit hit, ms until it resets}; when several are hit,
 * the one that resets last, since the message is refused until then.
 */
const CONSUME = `
local hit, wait = 0, -1
for i = 1, 4 do
  local limit = tonumber(ARGV[i])
  if limit > 0 and tonumber(redis.call('GET', KEYS[i]) or '0') >= limit then
    local ttl = redis.call('PTTL', KEYS[i])
    if ttl < 0 then
      ttl = tonumber(ARGV[4 + i])
      redis.call('PEXPIRE', KEYS[i], ttl)
    end
    if ttl > wait then hit, wait = i, ttl end
  end
end
if hit > 0 then return {hit, wait} end
for i = 1, 4 do
  if redis.call('INCR', KEYS[i]) == 1 or redis.call('PTTL', KEYS[i]) == -1 then
    redis.call('PEXPIRE', KEYS[i], ARGV[4 + i])
  end
end
return {0}
`;

const HITS: ReadonlyArray<{ scope: QuotaScope; window: QuotaWindow; field: keyof QuotaLimits }> = [
  { scope: 'user', window: 'minute', field: 'userPerMinute' },
  { scope: 'user', window: 'day', field: 'userPerDay' },
  { scope: 'channel', window: 'minute', field: 'channelPerMinute' },
  { scope: 'channel', window: 'day', field: 'channelPerDay' },
];

/** Defaults with the defined, valid overrides applied. */
export function effectiveLimits(defaults: QuotaLimits, overrides?: Partial<QuotaLimits>): QuotaLimits {
  const out = { ...defaults };
  for (const k of Object.keys(out) as Array<keyof QuotaLimits>) {
    const v = overrides?.[k];
    if (typeof v === 'number' && Number.isInteger(v) && v >= 0) out[k] = v;
  }
  return out;
}

/**
 * Fixed-window message quotas per user (`platform:userId`, across channels) and per channel,
 * checked and counted in one Lua script. Every key carries the `{quota}` hash tag so the
 * script's four keys share a Redis Cluster slot.
 */
export function createQuota(options: QuotaOptions): Quota {
  const { redis, defaults } = options;
  const minuteMs = options.windowMs?.minute ?? 60_000;
  const dayMs = options.windowMs?.day ?? 86_400_000;
  const base = `${options.prefix}:{quota}`;
  const enc = encodeURIComponent;
  const userKey = (p: Platform, id: string, w: QuotaWindow) => `${base}:user:${p}:${enc(id)}:${w}`;
  const channelKey = (p: Platform, id: string, w: QuotaWindow) => `${base}:channel:${p}:${enc(id)}:${w}`;

  return {
    async consume({ platform, channelId, userId, overrides }) {
      const limits = effectiveLimits(defaults, overrides);
      const keys = [
        userKey(platform, userId, 'minute'),
        userKey(platform, userId, 'day'),
        channelKey(platform, channelId, 'minute'),
        channelKey(platform, channelId, 'day'),
      ];
      const args = [...HITS.map((h) => limits[h.field]), minuteMs, dayMs, minuteMs, dayMs];
      const reply = (await redis.eval(CONSUME, 4, ...keys, ...args)) as number[];
      const index = Number(reply[0]);
      const hit = HITS[index - 1];
      if (!hit) return { ok: true };
      return {
        ok: false,
        scope: hit.scope,
        window: hit.window,
        limit: limits[hit.field],
        retryAfterMs: Math.max(0, Number(reply[1])),
      };
    },

    async usage({ platform, channelId, overrides }) {
      const [minute, day] = await redis.mget(channelKey(platform, channelId, 'minute'), channelKey(platform, channelId, 'day'));
      return { minute: Number(minute) || 0, day: Number(day) || 0, limits: effectiveLimits(defaults, overrides) };
    },
  };
}
