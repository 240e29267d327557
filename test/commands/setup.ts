import type { Redis } from 'ioredis';
import { createAuditLog } from '../../src/audit/audit-log.js';
import { createBindingStore } from '../../src/bindings/store.js';
import { createCommands, type CommandsOptions, type QueueStats } from '../../src/commands/handlers.js';
import type { CommandCaller } from '../../src/commands/types.js';
import { createDropLog } from '../../src/diagnostics/drop-log.js';
import { SecretRegistry } from '../../src/logger.js';
import { createQuota } from '../../src/quota/quota.js';
import { captureLogger, fakeAgentApi } from './fakes.js';

let n = 0;

/** Real Redis stores under a fresh sub-prefix, a fake agent API, and the commands over them. */
export function setup(redis: Redis, prefix: string, overrides: Partial<CommandsOptions> = {}) {
  const p = `${prefix}:${++n}`;
  const agentApi = fakeAgentApi();
  const bindings = createBindingStore({ redis, prefix: p, defaults: [{ platform: 'slack', channelId: 'CDEF', instanceId: 'inst_a' }] });
  const quota = createQuota({ redis, prefix: p, defaults: { userPerMinute: 5, userPerDay: 0, channelPerMinute: 10, channelPerDay: 100 } });
  const dropLog = createDropLog({ redis, prefix: p });
  const audit = createAuditLog({ redis, prefix: p });
  const stats: { value: QueueStats | Error } = { value: { waiting: 3, active: 1, delayed: 2, failed: 4, completed: 9 } };
  const { logger, lines } = captureLogger();
  const secrets = new SecretRegistry();
  const commands = createCommands({
    agentApi,
    bindings,
    quota,
    dropLog,
    audit,
    queueStats: async () => {
      if (stats.value instanceof Error) throw stats.value;
      return stats.value;
    },
    logger,
    secrets,
    probeTimeoutMs: 300,
    ...overrides,
  });
  return { p, agentApi, bindings, quota, dropLog, audit, stats, logger, lines, secrets, commands };
}

export const caller: CommandCaller = { platform: 'slack', workspaceId: 'T1', channelId: 'C1', userId: 'UADMIN', userName: 'Ada' };

/** Everything a reply shows, as one string. */
export function text(reply: { title: string; lines: string[]; table?: { columns: string[]; rows: string[][] } }): string {
  return [reply.title, ...reply.lines, ...(reply.table ? [reply.table.columns.join('|'), ...reply.table.rows.map((r) => r.join('|'))] : [])].join('\n');
}
