import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatQueue } from '../../src/queue/chat-queue.js';
import { deleteKeys } from '../support/redis-cleanup.js';
import { watchRedisCommands, type CommandWatch } from '../support/redis-monitor.js';
import { message } from './mailbox-fixture.js';

/**
 * A change kept for a message not stored yet (early-change.ts) costs a new message nothing: the
 * push that applies it is the push's one round trip (with its job's add), as MONITOR shows.
 */
const prefix = `test-early-rt-${randomUUID().slice(0, 8)}`;
let redis: Redis;
let queue: ChatQueue;
let watch: CommandWatch;

beforeAll(async () => {
  redis = new Redis('redis://127.0.0.1:6379');
  queue = new ChatQueue({ connection: redis.duplicate(), redis, prefix, keepCompleted: { age: 60, count: 10 }, keepFailed: { age: 60, count: 10 } });
  // Warm up (BullMQ loads its scripts and connects) before watching.
  await queue.enqueue(message('web:local:warm', 'warm'));
  watch = await watchRedisCommands(redis);
});
afterAll(async () => {
  watch?.stop();
  await queue?.close();
  await deleteKeys(prefix);
  redis?.disconnect();
});

/** The commands a step sends that name this file's keys. */
const commandsOf = (step: () => Promise<unknown>) => watch.commandsDuring(prefix, step);

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
