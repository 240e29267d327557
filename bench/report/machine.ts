import { createRequire } from 'node:module';
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
  mode: 'quick' | 'full';
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
