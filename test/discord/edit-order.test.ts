import { randomUUID } from 'node:crypto';
import { Client, Message } from 'discord.js';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMessageEdit } from '../../adapters/discord/message-edit.js';
import { encodeConversationId } from '../../src/core/conversation.js';
import { createEditedMessages, type EditOutcome } from '../../src/ingress/edited-message.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import { ChatQueue } from '../../src/queue/chat-queue.js';
import { editOrderAt } from '../../src/queue/early-change.js';
import type { ChatMessage } from '../../src/queue/types.js';
import { deleteKeys } from '../support/redis-cleanup.js';
import { watchRedisCommands, type CommandWatch } from '../support/redis-monitor.js';

/**
 * The edits of one waiting Discord question handled out of order (a catch-up replaying an edit
 * after a newer one came on the new session's own connection): the Discord edit handler
 * (message-edit.ts) with discord.js's own Message built from MESSAGE_UPDATE data, through the
 * ingress's edit, against the real queue and Redis. Before, the edit handled last won.
 */
const BOT = '900000000000000001';
const ALICE = '900000000000000002';
const DM = '900000000000000003';
const prefix = `test-dedit-order-${randomUUID().slice(0, 8)}`;
let redis: Redis;
let queue: ChatQueue;
let client: Client;
const outcomes: EditOutcome[] = [];
let onEdit: ReturnType<typeof createMessageEdit>;
let watch: CommandWatch;

beforeAll(async () => {
  redis = new Redis('redis://127.0.0.1:6379');
  queue = new ChatQueue({ connection: redis.duplicate(), redis, prefix, keepCompleted: { age: 60, count: 10 }, keepFailed: { age: 60, count: 10 } });
  client = new Client({ intents: [] });
  // Not logged in: the handler reads only the bot's ID from it.
  Object.defineProperty(client, 'user', { value: { id: BOT } });
  const logger = createLogger({ level: 'silent', registry: new SecretRegistry() });
  const edit = createEditedMessages({ queue, bindings: { get: async () => undefined }, ports: {}, logger, maxMessageChars: 4000 });
  const ctx = { logger, editMessage: async (...args: Parameters<typeof edit>) => outcomes[outcomes.push(await edit(...args)) - 1]! };
  onEdit = createMessageEdit({ ctx, allowBots: false, limits: { maxBytes: 0, maxChars: 4000 } });
  // Warm up (BullMQ connects and loads its scripts), then watch while Redis is quiet (see redis-monitor.ts).
  await queued('910000000000000000', 'warm');
  watch = await watchRedisCommands(redis);
});
afterAll(async () => {
  watch?.stop();
  await queue?.close();
  client?.destroy();
  await deleteKeys(prefix);
  redis?.disconnect();
});

/** Alice's DM question, queued as the ingress stores one. */
async function queued(id: string, text: string): Promise<ChatMessage> {
  const conversationId = encodeConversationId({ platform: 'discord', workspaceId: 'dm', channelId: DM });
  const m: ChatMessage = {
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
  await queue.enqueue(m);
  return m;
}

/** discord.js's message as a MESSAGE_UPDATE of Alice's edit, made at `editedAt`, leaves it (its channel not cached). */
function update(id: string, content: string, editedAt: Date | null): Message {
  const data = {
    id,
    channel_id: DM,
    type: 0,
    content,
    author: { id: ALICE, username: 'alice', discriminator: '0', global_name: null, avatar: null },
    timestamp: new Date(Date.now() - 60_000).toISOString(),
    edited_timestamp: editedAt?.toISOString() ?? null,
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

const textOf = async (m: ChatMessage) => (await queue.stored(m.conversationId, m.messageId))?.text;

describe('Discord: edits of a waiting question handled out of order', () => {
  it('the newer edit handled first stands: the older one, handled after it, changes nothing', async () => {
    const m = await queued('910000000000000001', 'my password is hunter2, typo here');
    const t = Date.now() - 5_000;
    outcomes.length = 0;
    await onEdit(undefined, update(m.messageId, 'my password is [removed]', new Date(t + 2_000)), true);
    await onEdit(undefined, update(m.messageId, 'my password is hunter2, typo fixed', new Date(t + 1_000)), true);
    expect(outcomes).toEqual(['edited', 'outdated']);
    expect(await textOf(m)).toBe('my password is [removed]');
    // A later edit still applies.
    await onEdit(undefined, update(m.messageId, 'my password is [removed], please check', new Date(t + 3_000)), true);
    expect(await textOf(m)).toBe('my password is [removed], please check');
  });

  it('edits one millisecond apart keep their order', async () => {
    const m = await queued('910000000000000002', 'first');
    const t = Date.now() - 5_000;
    outcomes.length = 0;
    await onEdit(undefined, update(m.messageId, 'third', new Date(t + 1)), true);
    await onEdit(undefined, update(m.messageId, 'second', new Date(t)), true);
    expect(outcomes).toEqual(['edited', 'outdated']);
    expect(await textOf(m)).toBe('third');
  });

  it('costs no round trip more: the read of the stored question, then the edit script with its compare-and-set read', async () => {
    const m = await queued('910000000000000003', 'before');
    const commands = await watch.commandsDuring(prefix, () => onEdit(undefined, update(m.messageId, 'after', new Date()), true));
    expect(commands).toEqual(['hget', 'hget', 'evalsha']);
    expect(await textOf(m)).toBe('after');
  });

  it('an order written by Slack (its `edited.ts`) compares with one made from the same instant', () => {
    // 1700000000.123456 as slackChangeTiming writes it; Discord has milliseconds.
    expect(editOrderAt(1_700_000_000_123)).toBe('001700000000123000');
    expect(editOrderAt(1_700_000_000_123)! < '001700000000123456').toBe(true);
    expect(editOrderAt(null)).toBeUndefined();
    expect(editOrderAt(Number.NaN)).toBeUndefined();
  });
});
