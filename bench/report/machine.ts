import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import type { Redis } from 'ioredis';
import { redisVersion } from '../lib/redis-admin.js';

export interface MachineInfo {
  cores: number;
  cpuModel: string;
  node: string;
  redis: string;
  bullmq: string;
  memoryGb: number;
  loadAverageAtStart: number[];
  loadAverageAtEnd?: number[];
  /** Share of the machine's CPU (all cores) in use during the run, by anything: see docs/benchmark.md. */
  cpuBusyPercent?: number;
  mode: 'quick' | 'full';
}

/** Busy and total CPU ticks of the whole machine (Linux), for the share in use during the run. */
export function cpuTicks(): { busy: number; total: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const total = fields.reduce((a, b) => a + b, 0);
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
}

/** Adds the end-of-run figures to `machine`. */
export function finishMachineInfo(machine: MachineInfo, start: ReturnType<typeof cpuTicks>): void {
  machine.loadAverageAtEnd = loadavg().map((l) => Math.round(l * 100) / 100);
  const end = cpuTicks();
  if (start && end && end.total > start.total) machine.cpuBusyPercent = Math.round((100 * (end.busy - start.busy)) / (end.total - start.total));
}

export async function machineInfo(redis: Redis, quick: boolean): Promise<MachineInfo> {
  const require = createRequire(import.meta.url);
  const bullmq = (require('bullmq/package.json') as { version: string }).version;
  return {
    cores: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    node: process.version,
    redis: await redisVersion(redis),
    bullmq,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    loadAverageAtStart: loadavg().map((l) => Math.round(l * 100) / 100),
    mode: quick ? 'quick' : 'full',
  };
}
