/**
 * Redis commands, Redis CPU, network bytes and memory held per message, bridge vs floor (one
 * worker, fast agent), from `INFO commandstats`, `INFO stats` and `INFO memory`. The capacity
 * section of docs/operations.md is built from these figures. Run it against a Redis nobody else uses, or other clients' commands are
 * counted too:
 *   redis-server --port 6390 --save '' --appendonly no &
 *   REDIS_URL=redis://127.0.0.1:6390 npx tsx bench/redis-cost.ts
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Child, killAll } from './lib/children.js';
import { redisCpuMs } from './lib/proc-cpu.js';
import { deleteKeys } from './lib/redis-admin.js';
import { benchSettings } from './lib/settings.js';
import type { ServicesInfo } from './procs/services-types.js';
import type { BenchContext } from './scenarios/context.js';
import { warmUp } from './scenarios/drive.js';
import { openPath } from './scenarios/paths.js';

const MESSAGES = 2_000;
const IGNORED = new Set(['info', 'scan', 'unlink', 'ping', 'client|setname', 'client|setinfo', 'hello', 'select']);

async function infoNumber(redis: Redis, section: string, field: string): Promise<number> {
  const m = new RegExp(`^${field}:(\\d+)`, 'm').exec(await redis.info(section));
  return m ? Number(m[1]) : 0;
}

async function commandStats(redis: Redis): Promise<Map<string, { calls: number; usec: number }>> {
  const stats = new Map<string, { calls: number; usec: number }>();
  for (const line of (await redis.info('commandstats')).split('\n')) {
    const m = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line);
    if (m) stats.set(m[1]!, { calls: Number(m[2]), usec: Number(m[3]) });
  }
  return stats;
}

const settings = benchSettings();
const redis = new Redis(settings.redisUrl);
const runId = `bench-${randomBytes(3).toString('hex')}`;
try {
  const services = await Child.spawn<ServicesInfo>(new URL('./procs/services.ts', import.meta.url), { label: 'services', env: {} });
  const ctx: BenchContext = { settings, runId, services, servicesOffset: await services.clockOffset(), redis, log: console.log };
  for (const kind of ['floor', 'bridge'] as const) {
    const path = await openPath(ctx, kind, 'cost');
    try {
      await path.startWorkers(1, 50, `cost-${kind}-worker`);
      await warmUp(ctx, path, 500, 'warm');
      const before = await commandStats(redis);
      const bytesIn = await infoNumber(redis, 'stats', 'total_net_input_bytes');
      const bytesOut = await infoNumber(redis, 'stats', 'total_net_output_bytes');
      const memory = await infoNumber(redis, 'memory', 'used_memory');
      const cpu = await redisCpuMs(redis);
      await warmUp(ctx, path, MESSAGES, 'measured');
      const after = await commandStats(redis);
      const perMessage = async (section: string, field: string, from: number) => Math.round(((await infoNumber(redis, section, field)) - from) / MESSAGES);
      const traffic = { in: await perMessage('stats', 'total_net_input_bytes', bytesIn), out: await perMessage('stats', 'total_net_output_bytes', bytesOut) };
      // What finished messages leave behind (completed jobs kept by KEEP_COMPLETED_*, dedupe marks).
      const held = await perMessage('memory', 'used_memory', memory);
      // The whole server process (network I/O included), not only the commands' own time.
      const cpuPerMessageUs = Math.round((((await redisCpuMs(redis)) - cpu) * 1e3) / MESSAGES);
      let calls = 0;
      let usec = 0;
      const parts: string[] = [];
      for (const [name, a] of [...after].sort((x, y) => y[1].calls - x[1].calls)) {
        const b = before.get(name) ?? { calls: 0, usec: 0 };
        if (IGNORED.has(name) || a.calls === b.calls) continue;
        calls += a.calls - b.calls;
        usec += a.usec - b.usec;
        parts.push(`${name} ${((a.calls - b.calls) / MESSAGES).toFixed(2)}`);
      }
      console.log(`${kind}: ${(calls / MESSAGES).toFixed(2)} commands and ${(usec / MESSAGES).toFixed(0)} µs of Redis time per message (${parts.join(', ')})`);
      console.log(`${kind}: network ${traffic.in} B in + ${traffic.out} B out per message; memory held after completion ${held} B per message; Redis process CPU ${cpuPerMessageUs} µs per message`);
    } finally {
      await path.close();
    }
  }
  await services.stop();
} finally {
  await killAll();
  await deleteKeys(redis, runId);
  redis.disconnect();
}
