import type { Redis } from 'ioredis';
import { errorFields } from '../logger.js';
import { z } from 'zod';
import type { Platform } from '../core/conversation.js';
import type { DropReason } from '../ingress/types.js';
import type { Logger } from '../logger.js';
import { parseJson } from '../json.js';
import { queueKeys } from '../queue/keys.js';

/** Why a message got no answer: an ingress drop, a refusal by the agent service, or a wait in line. */
export type NoAnswerReason = DropReason | 'agent_refused' | 'agent_failed' | 'reply_refused' | 'failed' | 'queued';

export interface DropEntry {
  messageId: string;
  userId: string;
  reason: NoAnswerReason;
  /** When it happened, ms since epoch. */
  at: number;
  /** Short reference ID that also appears in the log line (agent refusals). */
  ref?: string;
  /** `queued`: the message's conversation, so a reader can tell whether it is still waiting. */
  conversationId?: string;
}

export interface DropLog {
  /** Best effort: a failed write is logged, never thrown, so diagnostics never break the message path. */
  record(platform: Platform, channelId: string, entry: DropEntry): Promise<void>;
  /** Newest first; corrupt entries are skipped. */
  recent(platform: Platform, channelId: string, n: number): Promise<DropEntry[]>;
}

/** The write side of the drop log, which ingress and the worker are given. */
export type DropLogWriter = Pick<DropLog, 'record'>;

/** Options of {@link createDropLog}. */
export interface DropLogOptions {
  redis: Redis;
  prefix: string;
  logger?: Pick<Logger, 'debug' | 'warn'>;
  /** @defaultValue 50 entries per channel */
  maxEntries?: number;
  /** @defaultValue 7 days */
  ttlSeconds?: number;
}

/** Every reason `/agent why` can give, as stored. */
export const REASONS = [
  'not_bound',
  'not_addressed',
  'self',
  'bot',
  'content_missing',
  'empty',
  'too_long',
  'over_quota',
  'channel_busy',
  'no_account',
  'redis_unavailable',
  'agent_refused',
  'agent_failed',
  'reply_refused',
  'failed',
  'queued',
] as const satisfies readonly NoAnswerReason[];

const entrySchema = z.object({
  messageId: z.string(),
  userId: z.string(),
  reason: z.enum(REASONS),
  at: z.number(),
  ref: z.string().optional(),
  conversationId: z.string().optional(),
});

const WORDS: Record<NoAnswerReason, string> = {
  not_bound: 'this channel is not bound to an agent instance',
  not_addressed: "the bot wasn't addressed (mention it, reply to it, or bind the channel with mode `all`)",
  self: "it was the bot's own message",
  bot: 'it came from another bot, and bots are not answered',
  content_missing:
    'the bot could not read the message text: the Discord application needs the Message Content intent turned on',
  empty: 'the message was empty once the mention was removed',
  too_long: 'the message was longer than the bridge accepts',
  over_quota: 'the sender was over their message quota',
  channel_busy: 'the channel already had as many messages waiting for the agent as it may queue (MAX_PENDING_PER_CHANNEL)',
  no_account: "this workspace has no agent account yet (an admin sets one up with `setup`)",
  redis_unavailable: "the bridge's storage (Redis) was unavailable, so the message could not be queued",
  agent_refused: 'the agent service refused the message',
  agent_failed: "the agent service failed or didn't answer in time (retried as the call guarantee allows)",
  reply_refused: 'the chat platform refused to post the reply (for example, the bot is not a member of the channel)',
  failed: 'something went wrong in the bridge while answering',
  queued: 'it was waiting in line behind earlier messages of the conversation',
};

/** The reason in plain words, with the reference ID when there is one. */
export function describeReason(entry: Pick<DropEntry, 'reason' | 'ref'>): string {
  const words = WORDS[entry.reason] ?? 'unknown reason';
  return entry.ref ? `${words} (reference \`${entry.ref}\`)` : words;
}

/**
 * Per-channel record of messages that got no answer, for `/agent why`: a capped Redis list
 * `${prefix}:why:${platform}:${channelId}` that expires a week after its last write.
 */
export function createDropLog(options: DropLogOptions): DropLog {
  const { redis, logger } = options;
  const max = options.maxEntries ?? 50;
  const ttl = options.ttlSeconds ?? 7 * 86_400;
  const keys = queueKeys(options.prefix);
  const keyOf = keys.dropLog;

  return {
    async record(platform, channelId, entry) {
      const key = keyOf(platform, channelId);
      const clean: DropEntry = {
        messageId: entry.messageId,
        userId: entry.userId,
        reason: entry.reason,
        at: entry.at,
        ...(entry.ref ? { ref: entry.ref } : {}),
        ...(entry.conversationId ? { conversationId: entry.conversationId } : {}),
      };
      try {
        const results = await redis.multi().lpush(key, JSON.stringify(clean)).ltrim(key, 0, max - 1).expire(key, ttl).exec();
        const failed = results?.find(([err]) => err)?.[0];
        if (failed) throw failed;
      } catch (err) {
        logger?.debug({ ...errorFields(err), platform, channelId, reason: entry.reason }, 'could not record a dropped message');
      }
    },

    async recent(platform, channelId, n) {
      const count = Math.min(Math.max(0, Math.floor(n)), max);
      if (count === 0) return [];
      const raw = await redis.lrange(keyOf(platform, channelId), 0, count - 1);
      const out: DropEntry[] = [];
      for (const line of raw) {
        const parsed = entrySchema.safeParse(parseJson(line));
        if (parsed.success) out.push(parsed.data);
        else logger?.warn({ platform, channelId }, 'skipping a corrupt drop-log entry');
      }
      // "Waiting in line" is a reason only while the message still waits: once answered (its
      // record gone from the mailbox), it got an answer after all.
      const waiting = await Promise.all(
        out.map((e) => (e.reason === 'queued' && e.conversationId ? redis.hexists(keys.messages(e.conversationId), e.messageId).then((n) => n === 1) : true)),
      );
      return out.filter((_, i) => waiting[i]);
    },
  };
}
