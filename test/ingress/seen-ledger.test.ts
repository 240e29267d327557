import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSeenLedger } from '../../src/ingress/seen-ledger.js';
import { createLogger } from '../../src/logger.js';
import { queueKeys } from '../../src/queue/keys.js';
import { deleteKeys, SHARED_REDIS } from '../support/redis-cleanup.js';

const prefix = `test-seen-${randomUUID().slice(0, 8)}:chat`;
const keys = queueKeys(prefix);
const logger = createLogger({ level: 'silent' });
let redis: Redis;
beforeAll(() => {
  redis = new Redis(SHARED_REDIS);
});
beforeEach(() => deleteKeys(prefix));
afterAll(async () => {
  await deleteKeys(prefix);
  redis.disconnect();
});

/** Two ingress processes sharing one Redis: each ledger has its own memory. */
const twoProcesses = () => [createSeenLedger({ redis, prefix, logger }), createSeenLedger({ redis, prefix, logger })] as const;

describe('seen ledger', () => {
  it("lets one delivery of a message through, in any process, as 'delivered' for an hour", async () => {
    const [a, b] = twoProcesses();
    expect(await a.first('slack', 'C1:1.1')).toBe(true);
    expect(await a.first('slack', 'C1:1.1')).toBe(false);
    expect(await b.first('slack', 'C1:1.1')).toBe(false);
    expect(await redis.get(keys.seen('slack', 'C1:1.1'))).toBe('delivered');
    const ttl = await redis.ttl(keys.seen('slack', 'C1:1.1'));
    expect(ttl).toBeGreaterThan(3_500);
    expect(ttl).toBeLessThanOrEqual(3_600);
    // Another platform's message with the same ID is another message.
    expect(await b.first('web', 'C1:1.1')).toBe(true);
  });

  it('forget releases a claim, so a redelivery is handled again', async () => {
    const [a, b] = twoProcesses();
    expect(await a.first('slack', 'm1')).toBe(true);
    await a.forget('slack', 'm1');
    expect(await redis.exists(keys.seen('slack', 'm1'))).toBe(0);
    expect(await b.first('slack', 'm1')).toBe(true);
    await b.forget('slack', 'm1');
    expect(await a.first('slack', 'm1')).toBe(true);
  });

  it('forget leaves a queued message seen (a redelivery must not be queued twice)', async () => {
    const [a, b] = twoProcesses();
    expect(await a.first('slack', 'm2')).toBe(true);
    await redis.set(keys.seen('slack', 'm2'), 'queued', 'EX', 86_400); // as push-7.lua does
    await a.forget('slack', 'm2');
    expect(await redis.get(keys.seen('slack', 'm2'))).toBe('queued');
    expect(await b.first('slack', 'm2')).toBe(false);
  });

  it('accepted: only a message the mailbox queued (or marked as earlier versions did)', async () => {
    const [a] = twoProcesses();
    expect(await a.accepted('web', 'm3')).toBe(false);
    await a.first('web', 'm3');
    expect(await a.accepted('web', 'm3')).toBe(false);
    await redis.set(keys.seen('web', 'm3'), 'queued');
    expect(await a.accepted('web', 'm3')).toBe(true);
    await redis.set(keys.seen('web', 'm4'), '1');
    expect(await a.accepted('web', 'm4')).toBe(true);
  });

  it('a lease: one delivery at a time, renewed while held, lapsing within seconds once its holder is gone', async () => {
    const [a, b] = [createSeenLedger({ redis, prefix, logger, leaseMs: 600 }), createSeenLedger({ redis, prefix, logger, leaseMs: 600 })];
    const key = keys.seen('slack', 'L1');
    const first = await a.lease('slack', 'L1');
    if (first.kind !== 'taken') throw new Error(`expected a lease, got ${first.kind}`);
    expect(await redis.get(key)).toMatch(/^claiming:/);
    expect(await b.lease('slack', 'L1')).toEqual({ kind: 'busy' });
    // Held past its length: renewed.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await b.lease('slack', 'L1')).toEqual({ kind: 'busy' });
    // Its holder gone (no more renewals): it lapses, and the next delivery takes it.
    first.lease.stop();
    await new Promise((r) => setTimeout(r, 700));
    const second = await b.lease('slack', 'L1');
    expect(second.kind).toBe('taken');
    // The first holder's late settle or release leaves the new holder's lease alone.
    await first.lease.settle();
    await first.lease.release();
    expect(await redis.get(key)).toMatch(/^claiming:/);
    if (second.kind !== 'taken') return;
    // Handled on the record: 'delivered' for the claim's hour, and a repeat.
    await second.lease.settle();
    expect(await redis.get(key)).toBe('delivered');
    expect(await redis.ttl(key)).toBeGreaterThan(3_500);
    expect(await a.lease('slack', 'L1')).toEqual({ kind: 'handled' });
  });

  it('a lease released (not handed on) lets the next delivery in; one the push stored stays a repeat', async () => {
    const [a, b] = twoProcesses();
    const first = await a.lease('slack', 'L2');
    if (first.kind !== 'taken') throw new Error(`expected a lease, got ${first.kind}`);
    await first.lease.release();
    expect(await redis.exists(keys.seen('slack', 'L2'))).toBe(0);
    const second = await b.lease('slack', 'L2');
    if (second.kind !== 'taken') throw new Error(`expected a lease, got ${second.kind}`);
    await redis.set(keys.seen('slack', 'L2'), 'queued', 'EX', 86_400); // as push-7.lua does
    second.lease.stop();
    expect(await a.lease('slack', 'L2')).toEqual({ kind: 'handled' });
    // A lease is not an accepted message (a quota is charged once it is stored, not before).
    await redis.set(keys.seen('slack', 'L3'), 'claiming:x', 'PX', 5_000);
    expect(await a.accepted('slack', 'L3')).toBe(false);
  });

  it('while Redis is away, lets a message through once per process and says so in the log', async () => {
    const port = await closedPort();
    const down = new Redis(`redis://127.0.0.1:${port}`, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    const logs: string[] = [];
    const destination = new Writable({ write: (chunk, _enc, done) => void (logs.push(String(chunk)), done()) });
    const ledger = createSeenLedger({ redis: down, prefix, logger: createLogger({ level: 'debug', destination }) });
    try {
      expect(await ledger.first('slack', 'C1:2.1')).toBe(true);
      // The app_mention + message pair of one message: the second is a repeat even so.
      expect(await ledger.first('slack', 'C1:2.1')).toBe(false);
      expect(await ledger.first('slack', 'C1:2.2')).toBe(true);
      await ledger.forget('slack', 'C1:2.1');
      expect(await ledger.first('slack', 'C1:2.1')).toBe(true);
      expect(logs.join('')).toMatch(/delivery check failed; handing the message on/);
      await expect(ledger.accepted('slack', 'C1:2.1')).rejects.toThrow();
    } finally {
      down.disconnect();
    }
  });
});

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
