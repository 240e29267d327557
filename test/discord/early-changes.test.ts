import { randomUUID } from 'node:crypto';
import { Client, Message, SnowflakeUtil } from 'discord.js';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMessageEdit } from '../../adapters/discord/message-edit.js';
import { createPlaceEvents } from '../../adapters/discord/place-events.js';
import { GonePlaces } from '../../adapters/discord/gone-places.js';
import { KeyedSerial } from '../../adapters/discord/serial.js';
import { encodeConversationId, type ConversationRef } from '../../src/core/conversation.js';
import { createEditedMessages, type EditOutcome } from '../../src/ingress/edited-message.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import { ChatQueue } from '../../src/queue/chat-queue.js';
import type { ChangeTiming } from '../../src/queue/early-change.js';
import type { WithdrawResult } from '../../src/queue/mailbox.js';
import type { ChatMessage } from '../../src/queue/types.js';
import { deleteKeys } from '../support/redis-cleanup.js';
import { watchRedisCommands, type CommandWatch } from '../support/redis-monitor.js';

/**
 * A Discord edit or deletion handled before its message is stored (after a hand-over, the
 * question comes only in the catch-up's replay, and a change made just after its RESUME comes
 * live first): the Discord handlers (message-edit.ts, place-events.ts) with discord.js's own
 * Message, through the ingress, against the real queue and Redis. Before, the change found
 * nothing stored and was dropped: the question was stored and answered as first sent.
 */
const BOT = '900000000000000001';
const ALICE = '900000000000000002';
const DM = '900000000000000003';
const prefix = `test-dearly-${randomUUID().slice(0, 8)}`;
const conversationId = encodeConversationId({ platform: 'discord', workspaceId: 'dm', channelId: DM });
let redis: Redis;
let queue: ChatQueue;
let client: Client;
const outcomes: Array<EditOutcome | WithdrawResult> = [];
let onEdit: ReturnType<typeof createMessageEdit>;
let onPacket: ReturnType<typeof createPlaceEvents>;
const serial = new KeyedSerial();
let watch: CommandWatch;

beforeAll(async () => {
  redis = new Redis('redis://127.0.0.1:6379');
  queue = new ChatQueue({ connection: redis.duplicate(), redis, prefix, keepCompleted: { age: 60, count: 10 }, keepFailed: { age: 60, count: 10 } });
  client = new Client({ intents: [] });
  // Not logged in: the handlers read only the bot's ID and the channel cache from it.
  Object.defineProperty(client, 'user', { value: { id: BOT } });
  const logger = createLogger({ level: 'silent', registry: new SecretRegistry() });
  const edit = createEditedMessages({ queue, bindings: { get: async () => undefined }, ports: {}, logger, maxMessageChars: 4000 });
  const withdraw = async (c: ConversationRef, id: string, timing?: ChangeTiming) => queue.withdraw(encodeConversationId(c), id, randomUUID(), timing);
  const ctx = {
    logger,
    bindings: { get: async () => undefined, remove: async () => undefined },
    editMessage: async (...args: Parameters<typeof edit>) => {
      const outcome = await edit(...args);
      outcomes.push(outcome);
      return outcome;
    },
    withdrawMessage: async (...args: Parameters<typeof withdraw>) => {
      const outcome = await withdraw(...args);
      outcomes.push(outcome);
      return outcome;
    },
  };
  onEdit = createMessageEdit({ ctx, allowBots: false, limits: { maxBytes: 0, maxChars: 4000 } });
  onPacket = createPlaceEvents({ ctx: ctx as unknown as Parameters<typeof createPlaceEvents>[0]['ctx'], gone: new GonePlaces(redis, prefix), serial });
  // Warm up (BullMQ connects and loads its scripts), then watch while Redis is quiet (see redis-monitor.ts).
  await queue.enqueue(question(idSentAgo(0), 'warm'));
  watch = await watchRedisCommands(redis);
});
afterAll(async () => {
  watch?.stop();
  await queue?.close();
  client?.destroy();
  await deleteKeys(prefix);
  redis?.disconnect();
});

/** A message ID (snowflake) of a message sent `ms` ago. */
function idSentAgo(ms: number): string {
  return SnowflakeUtil.generate({ timestamp: Date.now() - ms }).toString();
}

/** Alice's DM question as the ingress stores one. */
function question(id: string, text: string): ChatMessage {
  return {
    platform: 'discord',
    messageId: id,
    conversationId,
    workspaceId: 'dm',
    channelId: DM,
    instanceId: 'inst-1',
    text,
    userId: ALICE,
    reply: { channelId: DM, messageId: id },
    receivedAt: Date.now(),
    errorPolicy: 'reply',
    context: 'off',
  };
}

/** discord.js's message as a MESSAGE_UPDATE of Alice's edit leaves it (its channel not cached). */
function update(id: string, content: string): Message {
  const data = {
    id,
    channel_id: DM,
    type: 0,
    content,
    author: { id: ALICE, username: 'alice', discriminator: '0', global_name: null, avatar: null },
    timestamp: new Date(SnowflakeUtil.timestampFrom(id)).toISOString(),
    edited_timestamp: new Date().toISOString(),
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: [],
    embeds: [],
    pinned: false,
  };
  return Reflect.construct(Message, [client, data]) as Message;
}

/** Alice deletes the message (a raw MESSAGE_DELETE); resolves once it is handled. */
async function deleted(id: string): Promise<void> {
  onPacket({ t: 'MESSAGE_DELETE', d: { id, channel_id: DM } } as Parameters<typeof onPacket>[0], client);
  await serial.run(DM, async () => {});
}

const stored = (id: string) => queue.stored(conversationId, id);
const gaveUp = async (id: string) => JSON.parse((await redis.hget(queue.mailbox.keys.messages(conversationId), `${id}:gaveUp`)) ?? 'null') as { withdrawn?: boolean } | null;

describe('Discord: a change handled before its message is stored', () => {
  it('an edit: the question is stored with the edited text', async () => {
    const id = idSentAgo(2_000);
    outcomes.length = 0;
    await onEdit(undefined, update(id, 'my password is [removed]'), true);
    expect(outcomes).toEqual(['kept']);
    await queue.enqueue(question(id, 'my password is hunter2'));
    expect((await stored(id))?.text).toBe('my password is [removed]');
    expect(await gaveUp(id)).toBeNull();
  });

  it('a deletion: the question is stored withdrawn (no agent call), its text not kept', async () => {
    const id = idSentAgo(2_000);
    outcomes.length = 0;
    await deleted(id);
    expect(outcomes).toEqual(['kept']);
    await queue.enqueue(question(id, 'my token is abc-oops'));
    expect((await stored(id))?.text).toBe('');
    expect(await gaveUp(id)).toMatchObject({ withdrawn: true });
    expect(JSON.stringify(await redis.hgetall(queue.mailbox.keys.messages(conversationId)))).not.toContain('abc-oops');
  });

  it('of a message sent long ago (no store of it is still to come): nothing is kept', async () => {
    const id = idSentAgo(60 * 60_000);
    outcomes.length = 0;
    await onEdit(undefined, update(id, 'an old one edited'), true);
    await deleted(id);
    expect(outcomes).toEqual(['absent', 'absent']);
    expect(await redis.exists(queue.mailbox.keys.earlyChange(conversationId, id))).toBe(0);
  });

  it('the question with an edit kept is stored in one round trip, as one without', async () => {
    const id = idSentAgo(1_000);
    await onEdit(undefined, update(id, 'edited first'), true);
    expect(await watch.commandsDuring(prefix, () => queue.enqueue(question(id, 'as first sent')))).toEqual(['evalsha']);
    expect((await stored(id))?.text).toBe('edited first');
  });
});
