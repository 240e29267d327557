import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

/** One key as an earlier release left it (test/reliability/upgrade-capture.ts). */
interface DumpedKey {
  /** The key without its prefix. */
  key: string;
  type: 'string' | 'hash' | 'list' | 'set' | 'zset';
  /** Milliseconds it had left (-1: no expiry). */
  pttl: number;
  value: string | Record<string, string> | string[];
}

/** The questions asked when the fixture was captured, by label, with the `ts` Slack gave them then. */
export interface AskedThen {
  label: string;
  channel: string;
  text: string;
  ts: string;
  threadOf?: string;
}

export interface QueueFixture {
  capturedAt: number;
  team: string;
  botUserId: string;
  asked: AskedThen[];
  keys: DumpedKey[];
}

export function readQueueFixture(url: URL): QueueFixture {
  return JSON.parse(readFileSync(url, 'utf8')) as QueueFixture;
}

/** A stored zset score that is a time (ms) near the capture: moved by the fixture's age. */
const NEAR_MS = 86_400_000;

/** A job lock or the stalled check's mark: kept briefly, as a killed worker's lapse soon after. */
const LAPSING = /(:lock|:stalled-check)$/;

/**
 * Writes a fixture's keys under `prefix` in one MULTI (a worker already running sees all or
 * nothing), with every `renames` entry replaced in keys and values (the `ts` of questions asked
 * again in a fresh emulator). Times in sorted sets (a channel's backlog, stranded entries) move
 * by the fixture's age, so they read as just written; locks lapse within `lockMs`.
 */
export async function restoreQueueFixture(redis: Redis, fixture: QueueFixture, prefix: string, renames: ReadonlyMap<string, string>, lockMs = 500): Promise<void> {
  const swap = (text: string) => {
    let out = text;
    for (const [from, to] of renames) out = out.split(from).join(to);
    return out;
  };
  const age = Date.now() - fixture.capturedAt;
  const m = redis.multi();
  for (const k of fixture.keys) {
    const key = `${prefix}:${swap(k.key)}`;
    m.del(key);
    if (k.type === 'string') m.set(key, swap(k.value as string));
    else if (k.type === 'hash') m.hset(key, Object.fromEntries(Object.entries(k.value as Record<string, string>).map(([f, v]) => [swap(f), swap(v)])));
    else if (k.type === 'list') m.rpush(key, ...(k.value as string[]).map(swap));
    else if (k.type === 'set') m.sadd(key, ...(k.value as string[]).map(swap));
    else {
      const pairs = k.value as string[];
      for (let i = 0; i < pairs.length; i += 2) {
        const score = Number(pairs[i + 1]);
        m.zadd(key, Math.abs(score - fixture.capturedAt) < NEAR_MS ? score + age : score, swap(pairs[i]!));
      }
    }
    if (LAPSING.test(k.key)) m.pexpire(key, Math.max(1, Math.min(k.pttl, lockMs)));
    else if (k.pttl > 0) m.pexpire(key, k.pttl);
  }
  await m.exec();
}
