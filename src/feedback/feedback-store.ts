import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import type { Platform } from '../core/conversation.js';
import { feedbackCounter } from './feedback-metric.js';

export type Rating = 'positive' | 'negative';

/** One click on a reply's feedback buttons. */
export interface FeedbackVote {
  /** The agent instance that wrote the reply. */
  instanceId: string;
  /** `messageId` of the agent service's chat answer (ChunkInfo.agentMessageId). */
  agentMessageId: string;
  platform: Platform;
  workspaceId: string;
  channelId: string;
  userId: string;
  rating: Rating;
  /** Where the reply can be seen (a Slack permalink, a Discord message URL), for `/agent feedback`. */
  link?: string;
  /** ms since epoch; now when omitted. */
  at?: number;
}

/** What {@link FeedbackStore.record} did. */
export interface RecordOutcome {
  /** false when the user had already given this very rating to this reply. */
  changed: boolean;
  previous?: Rating;
}

/** A negative vote as listed by `/agent feedback`. */
export interface NegativeReply {
  agentMessageId: string;
  platform: Platform;
  channelId: string;
  link?: string;
  at: number;
}

/** Feedback of one instance over a period. */
export interface InstanceFeedback {
  instanceId: string;
  positive: number;
  negative: number;
  /** Newest first, one per reply. */
  latestNegative: NegativeReply[];
}

export interface FeedbackStore {
  /** Records a vote; the same user's earlier vote on the same reply is replaced. */
  record(vote: FeedbackVote): Promise<RecordOutcome>;
  /**
   * Counts per instance of votes since `sinceMs` (default: the last 7 days), instances sorted by
   * ID. With `workspace`, only votes cast in that platform's workspace count (and are listed):
   * an admin sees their own workspace's feedback, never another's.
   */
  summary(options?: SummaryOptions): Promise<InstanceFeedback[]>;
}

/** Options of {@link FeedbackStore.summary}. */
export interface SummaryOptions {
  sinceMs?: number;
  /** Latest negative replies listed per instance. @defaultValue 5 */
  negatives?: number;
  /** Only these instances (listed even without votes). */
  instanceIds?: string[];
  /** Only votes cast in this workspace of this platform. */
  workspace?: { platform: Platform; workspaceId: string };
}

/** Options of {@link createFeedbackStore}. */
export interface FeedbackStoreOptions {
  redis: Redis;
  prefix: string;
  /**
   * Votes kept per instance (FEEDBACK_MAX_ENTRIES); the oldest go first, like the audit log.
   * @defaultValue 10000
   */
  maxEntries?: number;
  /** Registry that gets `agent_bridge_feedback_total{agent_instance,rating}`. */
  registry?: Registry;
  /**
   * The `agent_instance` label of a vote's instance (src/instance-label.ts: `other` for an ID
   * the service never listed, since a vote carries whatever ID its button or form held).
   * @defaultValue the ID itself
   */
  instanceLabel?: (instanceId: string) => string;
}

const WEEK_MS = 7 * 24 * 3600 * 1000;

interface StoredVote {
  r: Rating;
  p: Platform;
  w: string;
  c: string;
  l?: string;
}

/**
 * Feedback votes in Redis, per instance:
 * - `${prefix}:feedback:${instance}:at` sorted set, member `${agentMessageId}\n${platform}:${userId}`, score = time of the vote;
 * - `${prefix}:feedback:${instance}:vote` hash, same member → `{ r: rating, p, w, c, l: link }`;
 * - `${prefix}:feedback:instances` set of instance IDs that have votes.
 * A user's vote on a reply is one member, so changing it replaces it.
 */
export function createFeedbackStore(options: FeedbackStoreOptions): FeedbackStore {
  const { redis, prefix } = options;
  const max = options.maxEntries ?? 10_000;
  const counter = options.registry ? feedbackCounter(options.registry) : undefined;
  const keys = (instanceId: string) => ({
    at: `${prefix}:feedback:${instanceId}:at`,
    vote: `${prefix}:feedback:${instanceId}:vote`,
  });
  const instancesKey = `${prefix}:feedback:instances`;

  async function trim(instanceId: string): Promise<void> {
    const k = keys(instanceId);
    const size = await redis.zcard(k.at);
    if (size <= max) return;
    const oldest = await redis.zrange(k.at, '0', String(size - max - 1));
    if (oldest.length === 0) return;
    await redis.multi().zrem(k.at, ...oldest).hdel(k.vote, ...oldest).exec();
  }

  return {
    async record(vote) {
      const k = keys(vote.instanceId);
      const member = `${vote.agentMessageId}\n${vote.platform}:${vote.userId}`;
      const stored: StoredVote = { r: vote.rating, p: vote.platform, w: vote.workspaceId, c: vote.channelId, ...(vote.link ? { l: vote.link } : {}) };
      const res = await redis
        .multi()
        .hget(k.vote, member)
        .hset(k.vote, member, JSON.stringify(stored))
        .zadd(k.at, String(vote.at ?? Date.now()), member)
        .sadd(instancesKey, vote.instanceId)
        .exec();
      const before = parse(res?.[0]?.[1] as string | null | undefined);
      const changed = before?.r !== vote.rating;
      if (changed) counter?.inc({ agent_instance: options.instanceLabel?.(vote.instanceId) ?? vote.instanceId, rating: vote.rating });
      await trim(vote.instanceId);
      return { changed, ...(before ? { previous: before.r } : {}) };
    },

    async summary(opts = {}) {
      const since = opts.sinceMs ?? Date.now() - WEEK_MS;
      const wantNegatives = opts.negatives ?? 5;
      const scope = opts.workspace;
      const ids = (opts.instanceIds ?? (await redis.smembers(instancesKey))).slice().sort();
      const out: InstanceFeedback[] = [];
      for (const instanceId of ids) {
        const k = keys(instanceId);
        const flat = await redis.zrevrangebyscore(k.at, '+inf', String(since), 'WITHSCORES');
        const members: string[] = [];
        const times: number[] = [];
        for (let i = 0; i + 1 < flat.length; i += 2) {
          members.push(flat[i]!);
          times.push(Number(flat[i + 1]));
        }
        const entry: InstanceFeedback = { instanceId, positive: 0, negative: 0, latestNegative: [] };
        const listed = new Set<string>();
        for (let start = 0; start < members.length; start += 500) {
          const page = members.slice(start, start + 500);
          const values = await redis.hmget(k.vote, ...page);
          values.forEach((raw, i) => {
            const v = parse(raw);
            if (!v) return;
            if (scope && (v.p !== scope.platform || v.w !== scope.workspaceId)) return;
            if (v.r === 'positive') entry.positive++;
            else entry.negative++;
            const agentMessageId = page[i]!.split('\n')[0]!;
            if (v.r === 'negative' && entry.latestNegative.length < wantNegatives && !listed.has(agentMessageId)) {
              listed.add(agentMessageId);
              entry.latestNegative.push({ agentMessageId, platform: v.p, channelId: v.c, at: times[start + i]!, ...(v.l ? { link: v.l } : {}) });
            }
          });
        }
        if (entry.positive + entry.negative > 0 || opts.instanceIds) out.push(entry);
      }
      return out;
    },
  };
}

function parse(raw: string | null | undefined): StoredVote | undefined {
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw) as StoredVote;
    return v.r === 'positive' || v.r === 'negative' ? v : undefined;
  } catch {
    return undefined;
  }
}
