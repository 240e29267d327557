import type { Redis } from 'ioredis';
import { z } from 'zod';
import { PLATFORM_NAME, type Platform } from '../core/conversation.js';
import type { BindingDefault } from '../config/bindings-env.js';
import type { Logger } from '../logger.js';
import { parseJson } from '../json.js';
import { fallbackChannelOf } from './dm.js';
import type { Binding, BindingStore } from './types.js';

/** Options of {@link createBindingStore}. */
export interface BindingStoreOptions {
  redis: Redis;
  /** Key prefix; the store uses the one hash `${prefix}:bindings`. */
  prefix: string;
  /** `BINDINGS` entries: in force while Redis holds nothing (and no tombstone) for the channel. */
  defaults?: readonly BindingDefault[];
  /** Where corrupt entries are reported (warn). */
  logger?: Pick<Logger, 'warn'>;
}

const limit = z.number().int().min(0);

const bindingSchema = z.object({
  instanceId: z.string().min(1),
  mode: z.enum(['mention', 'all']),
  errorPolicy: z.enum(['reply', 'reaction', 'silent']),
  context: z.enum(['off', 'thread']),
  quota: z
    .object({
      userPerMinute: limit.optional(),
      userPerDay: limit.optional(),
      channelPerMinute: limit.optional(),
      channelPerDay: limit.optional(),
    })
    .optional(),
  source: z.enum(['default', 'admin']),
  updatedBy: z.string().optional(),
  updatedAt: z.number().optional(),
});

/** Stored when a default is removed, so the `BINDINGS` entry stays masked. */
const tombstoneSchema = z.object({ removed: z.literal(true), at: z.number() });

/** Attempts of a change that other changes keep overtaking before it is refused. */
const MAX_ATTEMPTS = 50;

/**
 * KEYS[1] the bindings hash. ARGV: field, its value as read ('' = absent), fallback field ('' =
 * none), its value as read, `set` or `del`, the new value. Writes only if both still hold what
 * was read; returns 1 if it wrote, else 0.
 */
const COMPARE_AND_WRITE = `
local function unchanged(f, seen) return (redis.call('HGET', KEYS[1], f) or '') == seen end
if not unchanged(ARGV[1], ARGV[2]) then return 0 end
if ARGV[3] ~= '' and not unchanged(ARGV[3], ARGV[4]) then return 0 end
if ARGV[5] == 'del' then redis.call('HDEL', KEYS[1], ARGV[1]) else redis.call('HSET', KEYS[1], ARGV[1], ARGV[6]) end
return 1
`;

type Stored = { kind: 'binding'; binding: Binding } | { kind: 'tombstone' } | { kind: 'none' };

/** The binding a `BINDINGS` entry stands for. */
export function defaultBinding(d: BindingDefault): Binding {
  return { instanceId: d.instanceId, mode: 'mention', errorPolicy: 'reply', context: 'off', source: 'default' };
}

function field(platform: Platform, channelId: string): string {
  return `${platform}:${channelId}`;
}

/**
 * Channel → instance bindings in the Redis hash `${prefix}:bindings` (field `platform:channelId`,
 * value JSON). `BINDINGS` defaults apply where Redis has no entry; a corrupt entry is logged and
 * treated as absent, never thrown. A workspace's DM channel `dm:<workspace>` with nothing of its
 * own falls back to `dm` (the `BINDINGS` default, or a binding stored there before DMs were kept
 * per workspace); removing it where that fallback is in force leaves a tombstone, so an unbind
 * in one workspace holds there and changes nothing elsewhere.
 */
export function createBindingStore(options: BindingStoreOptions): BindingStore {
  const { redis, logger } = options;
  const key = `${options.prefix}:bindings`;
  const defaults = new Map<string, BindingDefault>();
  for (const d of options.defaults ?? []) defaults.set(field(d.platform, d.channelId), d);

  function decode(name: string, raw: string | null | undefined): Stored {
    if (raw === null || raw === undefined) return { kind: 'none' };
    const json = parseJson(raw);
    const binding = bindingSchema.safeParse(json);
    if (binding.success) return { kind: 'binding', binding: binding.data };
    if (tombstoneSchema.safeParse(json).success) return { kind: 'tombstone' };
    logger?.warn({ field: name, key }, 'ignoring a corrupt binding entry in Redis');
    return { kind: 'none' };
  }

  function resolve(name: string, stored: Stored): Binding | undefined {
    if (stored.kind === 'binding') return stored.binding;
    if (stored.kind === 'tombstone') return undefined;
    const d = defaults.get(name);
    return d ? defaultBinding(d) : undefined;
  }

  /** What is stored for the channel and, for `dm:<workspace>`, for its fallback `dm`, in one read. */
  async function read(platform: Platform, channelId: string) {
    const name = field(platform, channelId);
    const fallback = fallbackChannelOf(channelId);
    if (!fallback) {
      const own = await redis.hget(key, name);
      return { name, own, stored: decode(name, own), fallbackName: undefined, shared: null, fallbackBinding: undefined };
    }
    const fallbackName = field(platform, fallback);
    const [own, shared] = await redis.hmget(key, name, fallbackName);
    return { name, own, stored: decode(name, own), fallbackName, shared, fallbackBinding: resolve(fallbackName, decode(fallbackName, shared)) };
  }

  /**
   * Writes `value` (null: deletes the field) only if neither the channel's field nor its
   * fallback's changed since `r` was read; false if one did (the caller reads again).
   */
  async function writeIfUnchanged(r: Awaited<ReturnType<typeof read>>, value: string | null): Promise<boolean> {
    const args = [r.name, r.own ?? '', r.fallbackName ?? '', r.shared ?? '', value === null ? 'del' : 'set', value ?? ''];
    return (await redis.eval(COMPARE_AND_WRITE, 1, key, ...args)) === 1;
  }

  /** Reads, lets `decide` pick what to write, and writes it unless another change came in between. */
  async function atomically<T>(platform: Platform, channelId: string, decide: (r: Awaited<ReturnType<typeof read>>) => { value: string | null; result: T }): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const r = await read(platform, channelId);
      const { value, result } = decide(r);
      if (await writeIfUnchanged(r, value)) return result;
      // Only admins change bindings, a few at a time: losing this often means something is wrong.
      if (attempt >= MAX_ATTEMPTS) throw new Error(`binding of ${r.name} kept changing; gave up after ${MAX_ATTEMPTS} attempts`);
      // A short random pause, so changes that collided do not collide again in step.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(attempt, 10) * 2));
    }
  }

  /** The channel's own entry (or tombstone, or `BINDINGS` default), else its fallback's. */
  function inForce(r: Awaited<ReturnType<typeof read>>): Binding | undefined {
    if (r.stored.kind !== 'none' || defaults.has(r.name)) return resolve(r.name, r.stored);
    return r.fallbackBinding;
  }

  return {
    async get(platform, channelId) {
      return inForce(await read(platform, channelId));
    },

    async set(platform, channelId, binding) {
      const valid = bindingSchema.parse(binding);
      await redis.hset(key, field(platform, channelId), JSON.stringify(valid));
    },

    update(platform, channelId, change) {
      return atomically(platform, channelId, (r) => {
        const previous = inForce(r);
        const next = change(previous);
        const binding = next && bindingSchema.parse(next);
        // Nothing to store: writing back what was read keeps the check (and changes nothing).
        return { value: binding ? JSON.stringify(binding) : (r.own ?? null), result: { previous, binding } };
      });
    },

    remove(platform, channelId) {
      return atomically(platform, channelId, (r) => {
        const previous = inForce(r);
        // Deleting the entry would let a default (or the shared `dm` binding) apply again: mask it.
        const mask = defaults.has(r.name) || r.fallbackBinding !== undefined;
        return { value: mask ? JSON.stringify({ removed: true, at: Date.now() }) : null, result: previous };
      });
    },

    async list(platform) {
      const all = await redis.hgetall(key);
      const names = new Set([...Object.keys(all), ...defaults.keys()]);
      const out: Array<{ platform: Platform; channelId: string; binding: Binding }> = [];
      for (const name of names) {
        const sep = name.indexOf(':');
        const p = name.slice(0, sep) as Platform;
        if (sep < 0 || !PLATFORM_NAME.test(p) || (platform && p !== platform)) continue;
        const binding = resolve(name, decode(name, all[name]));
        if (binding) out.push({ platform: p, channelId: name.slice(sep + 1), binding });
      }
      return out.sort((a, b) => field(a.platform, a.channelId).localeCompare(field(b.platform, b.channelId)));
    },
  };
}
