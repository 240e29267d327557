import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatQueue } from '../../src/queue/chat-queue.js';
import { deleteKeys } from '../support/redis-cleanup.js';
import { until } from '../support/until.js';
import { message } from './mailbox-fixture.js';

/**
 * A change kept for a message not stored yet (early-change.ts) costs a new message nothing: the
 * push that applies it is the push's one round trip (with its job's add), as MONITOR shows.
 */
const prefix = `test-early-rt-${randomUUID().slice(0, 8)}`;
let redis: Redis;
let queue: ChatQueue;
let monitor: Redis;
/** Commands sent to Redis by a client (not run by a script) that name this file's keys. */
const sent: string[][] = [];

beforeAll(async () => {
  redis = new Redis('redis://127.0.0.1:6379');
  queue = new ChatQueue({ connection: redis.duplicate(), redis, prefix, keepCompleted: { age: 60, count: 10 }, keepFailed: { age: 60, count: 10 } });
  // Warm up (BullMQ loads its scripts and connects) before watching.
  await queue.enqueue(message('web:local:warm', 'warm'));
  monitor = await redis.monitor();
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source !== 'lua' && args.some((a) => a.includes(prefix))) sent.push(args);
  });
});
afterAll(async () => {
  monitor?.disconnect();
  await queue?.close();
  await deleteKeys(prefix);
  redis?.disconnect();
});

/** The commands a step sends that name this file's keys. */
async function commandsOf(step: () => Promise<unknown>): Promise<string[]> {
  const settle = async () => {
    const marker = `${prefix}:settled:${randomUUID()}`;
    await redis.exists(marker);
    await until(() => sent.some((c) => c.includes(marker)), 'MONITOR caught up');
  };
  await settle();
  const from = sent.length;
  await step();
  await settle();
  return sent.slice(from, -1).map((c) => c[0]!.toLowerCase());
}

describe('a new message with an edit kept for it', () => {
  it('is stored in the same one round trip as one without', async () => {
    const plain = message('web:local:rt1', 'rt1');
    const edited = message('web:local:rt2', 'rt2');
    await queue.keepEarly(edited.conversationId, edited.messageId, { kind: 'edit', text: 'edited first' }, { sentAt: Date.now() }, 'R1');
    const withoutChange = await commandsOf(() => queue.enqueue(plain));
    const withChange = await commandsOf(() => queue.enqueue(edited));
    expect(withoutChange).toEqual(['evalsha']);
    expect(withChange).toEqual(withoutChange);
    expect(JSON.parse((await redis.hget(queue.mailbox.keys.messages(edited.conversationId), edited.messageId))!).text).toBe('edited first');
  });
});
