import type { Redis } from 'ioredis';
import { luaScript } from './lua-script.js';
import type { ChatMessage, MessageProgress } from './types.js';

/**
 * Per-conversation mailboxes that keep messages in arrival order.
 *
 * Ingress pushes each new message (once: a `seen` key dedupes redeliveries) onto its
 * conversation's list. A job that finds the conversation free takes its lease and drains the
 * list head first; jobs of the same conversation that arrive meanwhile find the lease held
 * and finish at once, because the holder will reach their messages in order. The holder
 * releases the lease only when the list is empty, in the same script that pops, so a
 * message pushed at any moment is either drained by the holder or finds the lease free.
 */

const PUSH = `
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[3]) == false then return 0 end
redis.call('HSET', KEYS[3], 'payload', ARGV[2])
redis.call('EXPIRE', KEYS[3], ARGV[4])
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[4])
return 1`;

// Takes the lease when free or already ours; returns {'', head, fields...} or {holder}.
const ACQUIRE = `
local holder = redis.call('GET', KEYS[2])
if holder and holder ~= ARGV[1] then return {holder} end
redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[2])
local head = redis.call('LINDEX', KEYS[1], 0)
if not head then
  redis.call('DEL', KEYS[2])
  return {''}
end
return {'', head, redis.call('HGETALL', ARGV[3] .. head)}`;

// Pops the finished head (if it still is the head), then either releases the lease on an
// empty mailbox or returns the next head.
const ADVANCE = `
if redis.call('LINDEX', KEYS[1], 0) == ARGV[2] then
  redis.call('LPOP', KEYS[1])
  redis.call('DEL', ARGV[3] .. ARGV[2])
end
local head = redis.call('LINDEX', KEYS[1], 0)
if not head then
  if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
  return {}
end
redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[4])
return {head, redis.call('HGETALL', ARGV[3] .. head)}`;

const TAKEOVER = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3]) return 1 end
return 0`;

const push = luaScript(PUSH, 3);
const acquire = luaScript(ACQUIRE, 2);
const advance = luaScript(ADVANCE, 2);
const takeOver = luaScript(TAKEOVER, 1);

const DAY = 86_400;

export interface MailboxOptions {
  redis: Redis;
  /** Key prefix, e.g. `agent-bridge:chat`. */
  prefix: string;
  /** How long a message ID counts as seen (redeliveries within it are duplicates). */
  seenTtlSeconds?: number;
  /** Upper bound on how long an undelivered message is kept. */
  messageTtlSeconds?: number;
  /** How long a thread counts as answered by the bot (follow-ups need no mention). */
  answeredTtlSeconds?: number;
}

export interface MailboxHead {
  messageId: string;
  /** Null when the stored message expired or was lost; the worker skips it. */
  message: ChatMessage;
  progress: MessageProgress;
}

export type AcquireResult = { held: true; head?: MailboxHead } | { held: false; holder: string };

export class Mailbox {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly seenTtl: number;
  private readonly messageTtl: number;
  private readonly answeredTtl: number;

  constructor(options: MailboxOptions) {
    this.redis = options.redis;
    this.prefix = options.prefix;
    this.seenTtl = options.seenTtlSeconds ?? DAY;
    this.messageTtl = options.messageTtlSeconds ?? 7 * DAY;
    this.answeredTtl = options.answeredTtlSeconds ?? 30 * DAY;
  }

  /** Adds a message to its conversation. Returns false when the message was seen before. */
  async push(message: ChatMessage): Promise<boolean> {
    const k = this.keys(message.conversationId);
    const added = await push(
      this.redis,
      this.seenKey(message.platform, message.messageId),
      k.mbox,
      k.msg + message.messageId,
      message.messageId,
      JSON.stringify(message),
      this.seenTtl,
      this.messageTtl,
    );
    return added === 1;
  }

  /** Takes (or keeps) the conversation's lease for `holder` and returns the head message. */
  async acquire(conversationId: string, holder: string): Promise<AcquireResult> {
    const k = this.keys(conversationId);
    const r = (await acquire(this.redis, k.mbox, k.lease, holder, this.messageTtl, k.msg)) as [
      string,
      string?,
      string[]?,
    ];
    if (r[0] !== '') return { held: false, holder: r[0] };
    return { held: true, head: r[1] ? this.toHead(r[1], r[2] ?? []) : undefined };
  }

  /** Moves the lease from a holder that is gone (its job finished or failed) to `holder`. */
  async takeOver(conversationId: string, from: string, holder: string): Promise<boolean> {
    return (await takeOver(this.redis, this.keys(conversationId).lease, from, holder, this.messageTtl)) === 1;
  }

  /** Finishes the head message and returns the next one, or undefined after releasing the lease on an empty mailbox. */
  async advance(conversationId: string, holder: string, done: string): Promise<MailboxHead | undefined> {
    const k = this.keys(conversationId);
    const r = (await advance(this.redis, k.mbox, k.lease, holder, done, k.msg, this.messageTtl)) as [
      string?,
      string[]?,
    ];
    return r[0] ? this.toHead(r[0], r[1] ?? []) : undefined;
  }

  /**
   * Records the agent's answer before anything is posted, and marks the conversation as one
   * the bot answered in (follow-ups in a thread then need no mention).
   */
  async recordReply(conversationId: string, messageId: string, reply: string): Promise<void> {
    await this.redis
      .multi()
      .hset(this.keys(conversationId).msg + messageId, 'reply', reply)
      .set(this.answeredKey(conversationId), '1', 'EX', this.answeredTtl)
      .exec();
  }

  /** Records progress of a message (after each chunk, after a failed attempt). */
  async record(conversationId: string, messageId: string, fields: Partial<Record<keyof MessageProgress, string | number>>): Promise<void> {
    await this.redis.hset(this.keys(conversationId).msg + messageId, fields);
  }

  async wasSeen(platform: string, messageId: string): Promise<boolean> {
    return (await this.redis.exists(this.seenKey(platform, messageId))) === 1;
  }

  /** Whether the bot already answered in this conversation (a thread). */
  async isAnswered(conversationId: string): Promise<boolean> {
    return (await this.redis.exists(this.answeredKey(conversationId))) === 1;
  }

  /**
   * Conversations with waiting messages and no lease: normally a job is on its way, but after a
   * crash between accepting a message and queueing its job, nothing would ever come.
   */
  async *unleased(): AsyncGenerator<MailboxHead & { conversationId: string }> {
    const start = `${this.prefix}:conv:`;
    for await (const keys of this.redis.scanStream({ match: `${start}*:mbox`, count: 500 })) {
      for (const key of keys as string[]) {
        const conversationId = key.slice(start.length, -':mbox'.length);
        const k = this.keys(conversationId);
        const [lease, head] = await Promise.all([this.redis.exists(k.lease), this.redis.lindex(k.mbox, 0)]);
        if (lease || !head) continue;
        const flat = await this.redis.hgetall(k.msg + head);
        yield { conversationId, ...this.toHead(head, Object.entries(flat).flat()) };
      }
    }
  }

  async depth(conversationId: string): Promise<number> {
    return this.redis.llen(this.keys(conversationId).mbox);
  }

  private toHead(messageId: string, flat: string[]): MailboxHead {
    const f: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!;
    return {
      messageId,
      message: JSON.parse(f.payload ?? 'null') as ChatMessage,
      progress: {
        reply: f.reply,
        posted: Number(f.posted ?? 0),
        attempts: Number(f.attempts ?? 0),
        limited: Number(f.limited ?? 0),
        working: f.working === '1',
        ...(f.posting !== undefined ? { posting: Number(f.posting) } : {}),
      },
    };
  }

  private keys(conversationId: string) {
    const base = `${this.prefix}:conv:${conversationId}`;
    return { mbox: `${base}:mbox`, lease: `${base}:lease`, msg: `${base}:msg:` };
  }

  private seenKey(platform: string, messageId: string) {
    return `${this.prefix}:seen:${platform}:${messageId}`;
  }

  private answeredKey(conversationId: string) {
    return `${this.prefix}:answered:${conversationId}`;
  }
}
