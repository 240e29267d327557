import type { Redis } from 'ioredis';
import type { Child } from '../lib/children.js';
import type { BenchSettings } from '../lib/settings.js';
import type { SinkBatch } from '../procs/sink.js';
import type { ServicesInfo } from '../procs/services-types.js';

/** What every scenario gets from the driver. */
export interface BenchContext {
  settings: BenchSettings;
  /** Prefix of every Redis key of this run: `bench-<random>`. */
  runId: string;
  services: Child<ServicesInfo>;
  /** The services process's clock minus the driver's (ms). */
  servicesOffset: number;
  /** An admin connection (counts, cleanup). */
  redis: Redis;
  log(line: string): void;
}

/** Replies the sink received since the last collect, with arrival times on the driver's clock. */
export interface Posts {
  byId: Map<string, number>;
  /** Arrival times, driver clock, in arrival order. */
  ats: number[];
  duplicates: number;
  notices: number;
}

export async function collectPosts(ctx: BenchContext): Promise<Posts> {
  const b = await ctx.services.call<SinkBatch>('collect');
  const byId = new Map<string, number>();
  const ats: number[] = [];
  let duplicates = 0;
  for (let i = 0; i < b.ids.length; i++) {
    const at = b.ats[i]! - ctx.servicesOffset;
    ats.push(at);
    if (byId.has(b.ids[i]!)) duplicates++;
    else byId.set(b.ids[i]!, at);
  }
  return { byId, ats, duplicates, notices: b.notices };
}

/** Waits until the sink holds `expected` replies (since the last collect). */
export async function waitForPosts(ctx: BenchContext, expected: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const count = await ctx.services.call<number>('count');
    if (count >= expected) return;
    if (Date.now() > deadline) throw new Error(`only ${count} of ${expected} replies reached the sink within ${Math.round(timeoutMs / 1000)} s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
