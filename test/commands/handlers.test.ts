import { afterAll, describe, expect, it } from 'vitest';
import { AgentApiError } from '../../src/core/errors.js';
import { cleanup, testRedis } from '../support/redis-helpers.js';
import { caller, setup, text } from './setup.js';

const { redis, prefix } = testRedis();
afterAll(() => cleanup(redis, prefix));

describe('help', () => {
  it('lists every subcommand', () => {
    const t = setup(redis, prefix, { commandName: '/ai' });
    const s = text(t.commands.help());
    for (const sub of ['instances', 'bind <instance-id> [mention|all]', 'unbind', 'status', 'credential <instance-id>', 'set errors reply|reaction|silent', 'set context off|thread', 'set quota <user-per-minute|user-per-day|channel-per-minute|channel-per-day> <n>', 'why', 'audit', 'help']) {
      expect(s).toContain(`\`/ai ${sub}`);
    }
  });
});

describe('instances', () => {
  it('lists id, name, status and type', async () => {
    const t = setup(redis, prefix);
    const r = await t.commands.instances(caller);
    expect(r.ok).toBe(true);
    expect(r.table).toEqual({
      columns: ['ID', 'Name', 'Status', 'Type'],
      rows: [
        ['inst_a', 'Alpha', 'running', 'assistant'],
        ['inst_b', 'Beta', 'stopped', 'assistant'],
      ],
    });
  });

  it('says when the account has none', async () => {
    const t = setup(redis, prefix);
    t.agentApi.instances = [];
    expect(await t.commands.instances(caller)).toMatchObject({ ok: true, lines: ['The account has no agent instances yet.'] });
  });

  it.each([
    [new AgentApiError('unauthorized', 'the agent service answered 401', { status: 401 }), 'did not accept our credentials'],
    [new AgentApiError('rate_limited', 'slow down', { status: 429, retryAfterMs: 30_000 }), 'try again in 30 seconds'],
    [new AgentApiError('server_error', 'boom', { status: 502 }), 'internal error'],
    [new AgentApiError('timeout', 'took too long'), "didn't answer in time"],
    [new AgentApiError('invalid_response', 'not json'), 'answered something unexpected'],
    [new AgentApiError('bad_request', 'instance limit reached', { status: 400 }), 'refused: instance limit reached'],
    [new Error('weird'), 'something went wrong'],
  ])('turns %s into plain words', async (err, words) => {
    const t = setup(redis, prefix);
    t.agentApi.listError = err;
    const r = await t.commands.instances(caller);
    expect(r.ok).toBe(false);
    expect(r.lines[0]).toMatch(/^Couldn't list the instances: /);
    expect(r.lines[0]).toContain(words);
  });
});

describe('refuse', () => {
  it('records the refused attempt and answers that only admins may', async () => {
    const t = setup(redis, prefix);
    const r = await t.commands.refuse({ ...caller, userId: 'UX', userName: 'Mallory' }, 'credential');
    expect(r).toEqual({ ok: false, title: 'Not allowed', lines: ['Only admins can use /agent credential.'] });
    expect(await t.audit.recent(1)).toMatchObject([
      { action: 'refused', actor: 'UX', actorName: 'Mallory', outcome: 'refused', detail: 'credential', channelId: 'C1', workspaceId: 'T1' },
    ]);
  });
});

describe('cachedInstances', () => {
  it('reuses a listing for instanceCacheMs, shares concurrent calls and does not cache failures', async () => {
    let clock = 0;
    const t = setup(redis, prefix, { instanceCacheMs: 1000, now: () => clock });
    t.agentApi.listError = new AgentApiError('network', 'down');
    await expect(t.commands.cachedInstances()).rejects.toThrow('down');
    t.agentApi.listError = undefined;
    const [a, b] = await Promise.all([t.commands.cachedInstances(), t.commands.cachedInstances()]);
    expect(a.map((i) => i.id)).toEqual(['inst_a', 'inst_b']);
    expect(b).toEqual(a);
    expect(t.agentApi.listCalls).toBe(2);
    clock = 999;
    await t.commands.cachedInstances();
    expect(t.agentApi.listCalls).toBe(2);
    clock = 1000;
    await t.commands.cachedInstances();
    expect(t.agentApi.listCalls).toBe(3);
  });

  it('hands out copies, so a caller cannot change the cache', async () => {
    const t = setup(redis, prefix);
    (await t.commands.cachedInstances()).pop();
    expect(await t.commands.cachedInstances()).toHaveLength(2);
  });
});

describe('unexpected failures', () => {
  it('become a reply with a reference ID that is also in the log', async () => {
    const t = setup(redis, prefix);
    t.bindings.get = t.bindings.update = t.bindings.remove = async () => {
      throw new Error('Connection is closed.');
    };
    for (const r of [await t.commands.bind(caller, 'inst_a'), await t.commands.unbind(caller), await t.commands.set(caller, 'errors', 'silent'), await t.commands.why(caller)]) {
      expect(r.ok).toBe(false);
      const ref = /reference `([A-Z2-9]{6})`/.exec(r.lines[0]!)?.[1];
      expect(ref).toBeDefined();
      expect(t.lines.some((l) => l.includes(ref!) && l.includes('Connection is closed.'))).toBe(true);
    }
  });

  it('a failed audit write does not fail the action', async () => {
    const t = setup(redis, prefix);
    t.audit.record = async () => {
      throw new Error('audit down');
    };
    expect((await t.commands.bind(caller, 'inst_a')).ok).toBe(true);
    expect(t.lines.some((l) => l.includes('could not write the audit entry'))).toBe(true);
  });
});
