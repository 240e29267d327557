import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { pino } from 'pino';
import { GatewaySessions, sessionsKey, type GatewaySession } from '../../adapters/discord/gateway-sessions.js';
import { redisNowMs } from '../../src/queue/redis-clock.js';
import { newPrefix } from '../support/bridge-harness.js';
import { deleteKeys, SHARED_REDIS } from '../support/redis-cleanup.js';

/** The Redis record a restarted Discord ingress resumes from (adapters/discord/gateway-sessions.ts). */
const prefix = newPrefix('gwsess');
const redis = new Redis(SHARED_REDIS);
const running: GatewaySessions[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop(false)));
  await deleteKeys(prefix);
});
afterAll(() => redis.disconnect());
afterEach(() => vi.restoreAllMocks());

/** Runs `fn` as a process whose clock is `offsetMs` off the others' (test/queue/clock-skew.test.ts). */
async function skewed<T>(offsetMs: number, fn: () => Promise<T>): Promise<T> {
  const real = Date.now.bind(Date);
  const spy = vi.spyOn(Date, 'now').mockImplementation(() => real() + offsetMs);
  try {
    return await fn();
  } finally {
    spy.mockRestore();
  }
}
const FIVE_MINUTES = 5 * 60_000;

const key = sessionsKey(prefix, 1, 2);
const ready = (sessionId: string, s = 1) => ({
  op: 0,
  s,
  t: 'READY',
  d: { session_id: sessionId, resume_gateway_url: 'wss://resume.example', shard: [1, 2] },
});
const record = async (sessionId: string) => JSON.parse((await redis.hget(key, sessionId)) ?? 'null') as GatewaySession | null;

function sessions(options: { onPredecessor?: (p: GatewaySession) => void; staleAfterMs?: number; pendingLimitMs?: number } = {}) {
  const s = new GatewaySessions({
    redis,
    prefix,
    logger: pino({ level: 'silent' }),
    onPredecessor: options.onPredecessor ?? (() => {}),
    renewEveryMs: 50,
    ...(options.staleAfterMs ? { staleAfterMs: options.staleAfterMs } : {}),
    ...(options.pendingLimitMs ? { pendingLimitMs: options.pendingLimitMs } : {}),
  });
  running.push(s);
  return s;
}

describe('gateway session records', () => {
  it('records the sequence up to which every message was handled, and the last one received on stop', async () => {
    const s = sessions();
    s.onPacket(ready('mine'), 1, 2);
    await expect.poll(() => record('mine')).toMatchObject({ sessionId: 'mine', sequence: 1, resumeURL: 'wss://resume.example', shardId: 1, shardCount: 2 });
    s.onPacket({ op: 0, s: 2, t: 'GUILD_CREATE', d: {} }, 1, 2);
    s.onPacket({ op: 0, s: 3, t: 'MESSAGE_CREATE', d: { id: 'm3' } }, 1, 2);
    s.onPacket({ op: 0, s: 4, t: 'TYPING_START', d: {} }, 1, 2);
    // m3 is still being handled: a crash now must replay it, so the record stays before it.
    await new Promise((r) => setTimeout(r, 200));
    expect((await record('mine'))?.sequence).toBe(2);
    s.handled('m3');
    await expect.poll(async () => (await record('mine'))?.sequence).toBe(4);
    s.onPacket({ op: 0, s: 5, t: 'MESSAGE_CREATE', d: { id: 'm5' } }, 1, 2);
    await s.stop(true);
    expect(await record('mine')).toMatchObject({ sequence: 5, stopped: true });
    expect(await redis.pttl(key)).toBeGreaterThan(170_000);
  });

  it('holds the record before an edit or a deletion until its handling settled, as before a message', async () => {
    // An edit (a password taken out) or a deletion received and not yet applied in Redis: a crash
    // now must leave it to be replayed. Before, only MESSAGE_CREATE held the record back.
    const s = sessions();
    s.onPacket(ready('mine'), 1, 2);
    await expect.poll(() => record('mine')).toMatchObject({ sequence: 1 });
    s.onPacket({ op: 0, s: 2, t: 'MESSAGE_UPDATE', d: { id: 'm0', channel_id: 'c' } }, 1, 2);
    s.onPacket({ op: 0, s: 3, t: 'MESSAGE_DELETE', d: { id: 'm1', channel_id: 'c' } }, 1, 2);
    s.onPacket({ op: 0, s: 4, t: 'MESSAGE_DELETE_BULK', d: { ids: ['m2', 'm3'], channel_id: 'c' } }, 1, 2);
    s.onPacket({ op: 0, s: 5, t: 'TYPING_START', d: {} }, 1, 2);
    expect(s.pendingMessages).toBe(3);
    await new Promise((r) => setTimeout(r, 200));
    expect((await record('mine'))?.sequence).toBe(1);
    s.changeHandled(1, 2);
    await expect.poll(async () => (await record('mine'))?.sequence).toBe(2);
    s.changeHandled(1, 4);
    await new Promise((r) => setTimeout(r, 200));
    expect((await record('mine'))?.sequence).toBe(2);
    s.changeHandled(1, 3);
    await expect.poll(async () => (await record('mine'))?.sequence).toBe(5);
    expect(s.pendingMessages).toBe(0);
  });

  it('lets an edit whose handling never settles hold the record back no longer than the limit', async () => {
    const s = sessions({ pendingLimitMs: 300 });
    s.onPacket(ready('mine'), 1, 2);
    s.onPacket({ op: 0, s: 2, t: 'MESSAGE_UPDATE', d: { id: 'm0', channel_id: 'c' } }, 1, 2);
    s.onPacket({ op: 0, s: 3, t: 'GUILD_CREATE', d: {} }, 1, 2);
    await expect.poll(async () => (await record('mine'))?.sequence).toBe(3);
    expect(s.pendingMessages).toBe(0);
  });

  it('forgets messages never handled once past the limit, so a process that runs for weeks does not keep them all', async () => {
    // discord.js emits no messageCreate (so nothing reports them handled) for a MESSAGE_CREATE
    // of a message it has cached already (a redelivery, a replay after a RESUME) or in a channel
    // it cannot build. Each stayed in memory for the life of the process, and every renewal
    // (every 2 s) walked them all.
    const s = sessions({ pendingLimitMs: 100 });
    s.onPacket(ready('mine'), 1, 2);
    for (let i = 0; i < 5_000; i++) s.onPacket({ op: 0, s: 2 + i, t: 'MESSAGE_CREATE', d: { id: `never-handled-${i}` } }, 1, 2);
    expect(s.pendingMessages).toBe(5_000);
    // Still held back while within the limit; past it the record moves on and the entries go.
    await expect.poll(async () => (await record('mine'))?.sequence).toBe(5_001);
    expect(s.pendingMessages).toBe(0);
    // A message within the limit still holds the record back.
    s.onPacket({ op: 0, s: 5_002, t: 'MESSAGE_CREATE', d: { id: 'fresh' } }, 1, 2);
    await new Promise((r) => setTimeout(r, 60));
    expect((await record('mine'))?.sequence).toBe(5_001);
    expect(s.pendingMessages).toBe(1);
  });

  it("hands over another process's session once it stopped or went stale, never one still renewed, and drops expired ones", async () => {
    const other = (sessionId: string, extra: Partial<GatewaySession>) =>
      redis.hset(key, sessionId, JSON.stringify({ sessionId, sequence: 7, resumeURL: 'wss://r', shardId: 1, shardCount: 2, writtenAt: Date.now(), ...extra }));
    await other('stopped', { stopped: true });
    await other('alive', {});
    await other('expired', { writtenAt: Date.now() - 10 * 60_000 });
    const seen: GatewaySession[] = [];
    const s = sessions({ onPredecessor: (p) => seen.push(p), staleAfterMs: 400 });
    s.onPacket(ready('mine'), 1, 2);
    await expect.poll(() => seen.map((p) => p.sessionId).sort()).toEqual(['alive', 'stopped']);
    expect(await redis.hexists(key, 'expired')).toBe(0);

    const halt = new AbortController();
    expect((await s.whenGone(seen.find((p) => p.sessionId === 'stopped')!, halt.signal))?.sequence).toBe(7);
    // 'alive' keeps being renewed by its process: not handed over.
    const renewing = setInterval(() => void other('alive', {}), 100);
    let gone: GatewaySession | undefined;
    const waiting = s.whenGone(seen.find((p) => p.sessionId === 'alive')!, halt.signal).then((g) => (gone = g));
    await new Promise((r) => setTimeout(r, 1_000));
    expect(gone).toBeUndefined();
    // Its process dies: the record goes stale and is handed over.
    clearInterval(renewing);
    await waiting;
    expect(gone?.sessionId).toBe('alive');
    await s.forget(gone!);
    expect(await redis.hexists(key, 'alive')).toBe(0);
  });

  it("judges another process's session by whether it is renewed, not by its writer's clock (minutes off this one's)", async () => {
    const other = (sessionId: string, writtenAt: number) =>
      redis.hset(key, sessionId, JSON.stringify({ sessionId, sequence: 7, resumeURL: 'wss://r', shardId: 1, shardCount: 2, writtenAt }));
    const s = sessions({ staleAfterMs: 400 });
    const halt = new AbortController();
    try {
      // Alive, on a machine whose clock is 30 s behind: still renewed, so never handed over.
      let n = 0;
      const behind = () => other('behind', Date.now() - 30_000 + n++);
      await behind();
      const renewing = setInterval(() => void behind(), 100);
      let alive: GatewaySession | undefined;
      void s.whenGone((await record('behind'))!, halt.signal).then((g) => (alive = g));
      await new Promise((r) => setTimeout(r, 1_000));
      clearInterval(renewing);
      expect(alive).toBeUndefined();
      // Crashed, on a machine whose clock was 10 min ahead: handed over once it stays unrenewed,
      // not 10 minutes later (Discord keeps a session resumable only a few minutes).
      await other('ahead', Date.now() + 10 * 60_000);
      const gone = await Promise.race([s.whenGone((await record('ahead'))!, halt.signal), new Promise<'later'>((r) => setTimeout(() => r('later'), 5_000))]);
      expect(gone).toMatchObject({ sessionId: 'ahead' });
    } finally {
      halt.abort();
    }
  });

  describe('at READY, a crashed process\'s session is judged by Redis\'s clock, not by two machines\' clocks agreeing', () => {
    /** A process that ran the shard (its clock `offsetMs` off) and crashed: its record is no longer renewed. */
    async function crashed(sessionId: string, offsetMs: number): Promise<void> {
      const s = sessions();
      await skewed(offsetMs, async () => {
        s.onPacket(ready(sessionId), 1, 2);
        // Stopping without a final write, as a crash: it waits for the record written at READY.
        await s.stop(false);
      });
      expect(await record(sessionId)).toMatchObject({ sessionId });
    }
    /** The next process's READY on the shard (its clock `offsetMs` off): the sessions it hands over. */
    async function next(offsetMs: number): Promise<string[]> {
      const seen: GatewaySession[] = [];
      const s = sessions({ onPredecessor: (p) => seen.push(p) });
      return skewed(offsetMs, async () => {
        s.onPacket(ready('next'), 1, 2);
        // Waits for the READY's writes and reads (the others' records looked at).
        await s.stop(false);
        return seen.map((p) => p.sessionId);
      });
    }

    it('hands over the session of a crashed process whose clock was 5 min behind', async () => {
      await crashed('behind', -FIVE_MINUTES);
      expect(await next(0)).toEqual(['behind']);
      expect(await redis.hexists(key, 'behind')).toBe(1);
    });

    it('hands over a crashed process\'s session when its own clock is 5 min ahead', async () => {
      await crashed('crashed', 0);
      expect(await next(FIVE_MINUTES)).toEqual(['crashed']);
    });

    it('drops a record Redis stored over 3 min ago, even when its writer\'s clock made it look fresh', async () => {
      const storedAt = (await redisNowMs(redis)) - 4 * 60_000;
      await redis.hset(key, 'old', JSON.stringify({ sessionId: 'old', sequence: 7, resumeURL: 'wss://r', shardId: 1, shardCount: 2, writtenAt: Date.now(), storedAt }));
      expect(await next(0)).toEqual([]);
      expect(await redis.hexists(key, 'old')).toBe(0);
    });

    it('judges a record of an older release (no Redis stamp) by its writtenAt, as before', async () => {
      const legacy = (sessionId: string, writtenAt: number) =>
        redis.hset(key, sessionId, JSON.stringify({ sessionId, sequence: 7, resumeURL: 'wss://r', shardId: 1, shardCount: 2, writtenAt }));
      await legacy('legacy-fresh', Date.now() - 10_000);
      await legacy('legacy-old', Date.now() - 4 * 60_000);
      expect(await next(0)).toEqual(['legacy-fresh']);
      expect(await redis.hexists(key, 'legacy-old')).toBe(0);
    });
  });
});
