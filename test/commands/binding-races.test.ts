import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createAuditLog } from '../../src/audit/audit-log.js';
import { createCachedBindingStore, type CachedBindingStore } from '../../src/bindings/cache.js';
import { createBindingStore } from '../../src/bindings/store.js';
import { createCommands } from '../../src/commands/handlers.js';
import type { CommandCaller, CommandReply } from '../../src/commands/types.js';
import { createDropLog } from '../../src/diagnostics/drop-log.js';
import { SecretRegistry } from '../../src/logger.js';
import { createQuota } from '../../src/quota/quota.js';
import { cleanup, REDIS_URL, testRedis } from '../support/redis-helpers.js';
import { captureLogger, fakeAgentApi } from './fakes.js';
import { text } from './setup.js';

/**
 * Admins change one channel's binding at the same moment from two processes (two ingress
 * replicas, Redis shared): one change wins, and each admin is told what the binding really was
 * before their change, never what the other admin's change erased.
 */
const { redis, prefix } = testRedis();
const opened: Array<{ bindings: CachedBindingStore; conn: Redis }> = [];
afterAll(async () => {
  for (const o of opened) {
    await o.bindings.close();
    await o.conn.quit();
  }
  await cleanup(redis, prefix);
});

const INSTANCES = ['inst_a', 'inst_b', 'inst_c'].map((id) => ({ id, name: id, status: 'running' as const, type: 'assistant' }));

/** One process: its own connection, cached binding store (as in production) and commands. */
async function proc(p: string) {
  const conn = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  const bindings = createCachedBindingStore({ store: createBindingStore({ redis: conn, prefix: p }), redis: conn, prefix: p });
  opened.push({ bindings, conn });
  await bindings.ready();
  const commands = createCommands({
    agentApi: fakeAgentApi(INSTANCES),
    bindings,
    quota: createQuota({ redis: conn, prefix: p, defaults: { userPerMinute: 0, userPerDay: 0, channelPerMinute: 0, channelPerDay: 0 } }),
    dropLog: createDropLog({ redis: conn, prefix: p }),
    audit: createAuditLog({ redis: conn, prefix: p }),
    queueStats: async () => ({ waiting: 0, active: 0, delayed: 0, failed: 0, completed: 0 }),
    logger: captureLogger().logger,
    secrets: new SecretRegistry(),
  });
  return { bindings, commands };
}

const admin = (userId: string): CommandCaller => ({ platform: 'slack', workspaceId: 'T1', channelId: 'C1', userId, userName: userId });
const replaced = (r: CommandReply) => /It was bound to `([^`]+)` before/.exec(text(r))?.[1];

describe('two admins change one binding at once, from two processes', () => {
  it('bind and bind: one wins; each admin is told the binding their change replaced', async () => {
    const p = `${prefix}:bind`;
    const [one, two] = [await proc(p), await proc(p)];
    await one.commands.bind(admin('UONE'), 'inst_a');
    let current = 'inst_a';
    // Several rounds: the race must be won honestly every time, whichever way it goes.
    for (let round = 0; round < 6; round++) {
      const [first, second] = round % 2 ? ['inst_b', 'inst_c'] : ['inst_c', 'inst_b'];
      const [r1, r2] = await Promise.all([one.commands.bind(admin('UONE'), first), two.commands.bind(admin('UTWO'), second)]);
      expect([r1.ok, r2.ok]).toEqual([true, true]);
      const now = (await redis.hget(`${p}:bindings`, 'slack:C1'))!;
      const winner = (JSON.parse(now) as { instanceId: string }).instanceId;
      const [won, lost] = winner === first ? [r1, r2] : [r2, r1];
      const loser = winner === first ? second : first;
      // The change that landed last replaced the other admin's; that one replaced what was there.
      expect(replaced(won)).toBe(loser);
      expect(replaced(lost)).toBe(current === loser ? undefined : current);
      current = winner;
      // Both processes now answer with the winner (each dropped its cached entry).
      expect((await one.bindings.get('slack', 'C1'))?.instanceId).toBe(winner);
    }
  });

  it('unbind and unbind: one admin unbinds, the other is told the channel is no longer bound', async () => {
    const p = `${prefix}:twice`;
    const [one, two] = [await proc(p), await proc(p)];
    for (let round = 0; round < 6; round++) {
      await one.commands.bind(admin('UONE'), 'inst_a');
      const replies = await Promise.all([one.commands.unbind(admin('UONE')), two.commands.unbind(admin('UTWO'))]);
      expect(replies.map((r) => r.ok).sort()).toEqual([false, true]);
    }
  });
});
