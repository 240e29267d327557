import type { Redis } from 'ioredis';
import { readFile } from 'node:fs/promises';

/**
 * CPU time (user + system, ms) another process has used so far, from Linux's /proc/<pid>/stat
 * (clock ticks, 100 per second on Linux). NaN where /proc is not available.
 */
export async function processCpuMs(pid: number): Promise<number> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

/** CPU time (user + system, ms) the Redis server has used so far, from `INFO cpu`. */
export async function redisCpuMs(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return (field('used_cpu_sys') + field('used_cpu_user')) * 1000;
}
