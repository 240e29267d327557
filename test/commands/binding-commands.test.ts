import { afterAll, describe, expect, it } from 'vitest';
import { AgentApiError } from '../../src/core/errors.js';
import type { CommandReply } from '../../src/commands/types.js';
import { cleanup, testRedis } from '../support/redis-helpers.js';
import { caller, setup, text } from './setup.js';

const { redis, prefix } = testRedis();
afterAll(() => cleanup(redis, prefix));

/** The settings `bind` gives a channel that had no binding, when given no mode. */
const DEFAULT_SETTINGS = { mode: 'mention', errorPolicy: 'reply', context: 'off' };

/** The command answered ok (or not) and its answer says each of `says`. */
function expectAnswer(r: CommandReply, ok: boolean, ...says: string[]) {
  expect(r.ok).toBe(ok);
  for (const s of says) expect(text(r)).toContain(s);
}

/** Commands whose channel (C1) is bound to `inst_a`. */
async function boundToAlpha() {
  const t = setup(redis, prefix);
  await t.commands.bind(caller, 'inst_a');
  return t;
}

describe('bind', () => {
  it('binds the channel with the default settings and records it', async () => {
    const t = setup(redis, prefix, { now: () => 1_700_000_000_000 });
    const r = await t.commands.bind(caller, 'inst_a');
    expectAnswer(r, true, '`Alpha` (`inst_a`)', 'Mode `mention`');
    expect(await t.bindings.get('slack', 'C1')).toEqual({
      instanceId: 'inst_a',
      ...DEFAULT_SETTINGS,
      source: 'admin',
      updatedBy: 'UADMIN',
      updatedAt: 1_700_000_000_000,
    });
    expect(await t.audit.recent(1)).toMatchObject([
      { action: 'bind', actor: 'UADMIN', actorName: 'Ada', platform: 'slack', workspaceId: 'T1', channelId: 'C1', instanceId: 'inst_a', outcome: 'ok', detail: 'mode=mention' },
    ]);
  });

  it('keeps the error policy, context and quota of an existing binding when re-binding', async () => {
    const t = setup(redis, prefix);
    await t.commands.bind(caller, 'inst_a', 'all');
    await t.commands.set(caller, 'errors', 'silent');
    await t.commands.set(caller, 'context', 'thread');
    await t.commands.set(caller, 'quota', 'user-per-minute 2');
    const r = await t.commands.bind(caller, 'inst_b');
    expectAnswer(r, true, 'bound to `inst_a` before', 'status is `stopped`');
    expect(await t.bindings.get('slack', 'C1')).toMatchObject({
      instanceId: 'inst_b',
      mode: 'mention',
      errorPolicy: 'silent',
      context: 'thread',
      quota: { userPerMinute: 2 },
    });
  });

  it('refuses an unknown instance and changes nothing', async () => {
    const t = setup(redis, prefix);
    const r = await t.commands.bind(caller, 'inst_zzz', 'all');
    expect(r).toEqual({ ok: false, title: 'Bind', lines: ['No instance with ID `inst_zzz`. Run /agent instances to see them.'] });
    expect(await t.bindings.get('slack', 'C1')).toBeUndefined();
    expect(await t.audit.recent(1)).toMatchObject([{ action: 'bind', outcome: 'failed', instanceId: 'inst_zzz' }]);
  });

  it('looks again past the cache for an instance created a moment ago', async () => {
    const t = setup(redis, prefix);
    await t.commands.cachedInstances();
    t.agentApi.instances.push({ id: 'inst_new', name: 'New', status: 'running', type: 'assistant' });
    expect((await t.commands.bind(caller, 'inst_new')).ok).toBe(true);
    expect(t.agentApi.listCalls).toBe(2);
  });

  it('says so in plain words when the agent service cannot be asked', async () => {
    const t = setup(redis, prefix);
    t.agentApi.listError = new AgentApiError('network', 'connect ECONNREFUSED');
    const r = await t.commands.bind(caller, 'inst_a');
    expectAnswer(r, false, "Couldn't check instance `inst_a`: the agent service can't be reached. Nothing was changed.");
    expect(await t.bindings.get('slack', 'C1')).toBeUndefined();
  });

  it('asks for an instance ID when given none', async () => {
    const t = setup(redis, prefix);
    expect(text(await t.commands.bind(caller, '  '))).toContain('/agent bind <instance-id>');
  });
});

describe('unbind', () => {
  it('removes the binding and records it', async () => {
    const t = await boundToAlpha();
    const r = await t.commands.unbind(caller);
    expectAnswer(r, true, 'no longer talks to `inst_a`');
    expect(await t.bindings.get('slack', 'C1')).toBeUndefined();
    expect((await t.audit.recent(1))[0]).toMatchObject({ action: 'unbind', instanceId: 'inst_a', outcome: 'ok' });
  });

  it('masks a BINDINGS default and says so', async () => {
    const t = setup(redis, prefix);
    const r = await t.commands.unbind({ ...caller, channelId: 'CDEF' });
    expect(text(r)).toContain('BINDINGS default');
    expect(await t.bindings.get('slack', 'CDEF')).toBeUndefined();
  });

  it('answers ok:false when the channel is not bound', async () => {
    const t = setup(redis, prefix);
    const r = await t.commands.unbind(caller);
    expectAnswer(r, false, "isn't bound");
  });
});

describe('set', () => {
  it('needs a binding', async () => {
    const t = setup(redis, prefix);
    const r = await t.commands.set(caller, 'errors', 'reaction');
    expectAnswer(r, false, 'Bind it first: `/agent bind <instance-id>`');
  });

  it('changes the error policy, the thread context and quotas, and records each', async () => {
    const t = await boundToAlpha();
    expect(text(await t.commands.set(caller, 'errors', 'reaction'))).toContain('warning reaction');
    expect(text(await t.commands.set(caller, 'CONTEXT', ' thread '))).toContain("thread's earlier messages");
    expect(text(await t.commands.set(caller, 'quota', 'channel-per-day 0'))).toContain('`channel-per-day` is now unlimited');
    expect(text(await t.commands.set(caller, 'quota', 'user-per-minute 7'))).toContain('now 7 messages');
    expect(await t.bindings.get('slack', 'C1')).toMatchObject({
      errorPolicy: 'reaction',
      context: 'thread',
      quota: { channelPerDay: 0, userPerMinute: 7 },
    });
    expect(text(await t.commands.set(caller, 'quota', 'user-per-minute default'))).toContain('back to the default');
    expect(text(await t.commands.set(caller, 'quota', 'channel-per-day default'))).toContain('back to the default');
    expect((await t.bindings.get('slack', 'C1'))?.quota).toBeUndefined();
    expect((await t.audit.recent(10)).filter((e) => e.action === 'set').map((e) => e.detail)).toEqual([
      'quota channel-per-day default',
      'quota user-per-minute default',
      'quota user-per-minute 7',
      'quota channel-per-day 0',
      'context thread',
      'errors reaction',
    ]);
  });

  it('refuses unknown settings and values with a clear error', async () => {
    const t = await boundToAlpha();
    expect(text(await t.commands.set(caller, 'errors', 'loud'))).toContain('`reply`, `reaction` or `silent`');
    expect(text(await t.commands.set(caller, 'quota', 'user-per-minute lots'))).toContain('whole number');
    expect(text(await t.commands.set(caller, 'volume', '11'))).toContain('There is no setting `volume`');
    expect(await t.bindings.get('slack', 'C1')).toMatchObject({ errorPolicy: 'reply' });
  });

  it('works on a BINDINGS default', async () => {
    const t = setup(redis, prefix);
    const c = { ...caller, channelId: 'CDEF' };
    expect((await t.commands.set(c, 'errors', 'silent')).ok).toBe(true);
    expect(await t.bindings.get('slack', 'CDEF')).toMatchObject({ instanceId: 'inst_a', errorPolicy: 'silent' });
  });
});
