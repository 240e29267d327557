import { z } from 'zod';

const base = { channelId: z.string().min(1).max(64), at: z.number() };

/**
 * What happens in a web channel. The stream of these is the web "platform": the page shows
 * it, and the reply port reads it back for thread context.
 */
export const webEventSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('message'),
    ...base,
    messageId: z.string().min(1).max(100),
    userId: z.string().min(1).max(100),
    userName: z.string().max(100),
    text: z.string(),
    mention: z.boolean(),
  }),
  z.object({
    type: z.literal('reply'),
    ...base,
    replyTo: z.string().max(100),
    index: z.number().int().min(0),
    text: z.string(),
    /** On the last chunk of a reply the agent service identified: what the page's 👍/👎 rate. */
    feedback: z.object({ instanceId: z.string().max(200), agentMessageId: z.string().max(200) }).optional(),
  }),
  z.object({ type: z.literal('notice'), ...base, replyTo: z.string().max(100), text: z.string() }),
  z.object({ type: z.literal('working'), ...base, replyTo: z.string().max(100) }),
  z.object({ type: z.literal('done'), ...base, replyTo: z.string().max(100), outcome: z.enum(['ok', 'failed']) }),
]);

export type WebEvent = z.infer<typeof webEventSchema>;

/** An event with its stream entry ID (`ms-seq`), which orders events and serves as the SSE `id`. */
export type StoredWebEvent = WebEvent & { id: string };

const STREAM_ID = /^(\d+)-(\d+)$/;

export function isStreamId(id: string): boolean {
  return STREAM_ID.test(id);
}

/** Orders two stream IDs; negative when `a` came first. */
export function compareStreamIds(a: string, b: string): number {
  const ma = STREAM_ID.exec(a);
  const mb = STREAM_ID.exec(b);
  if (!ma || !mb) return a < b ? -1 : a > b ? 1 : 0;
  const ms = BigInt(ma[1]!) - BigInt(mb[1]!);
  if (ms !== 0n) return ms < 0n ? -1 : 1;
  const seq = BigInt(ma[2]!) - BigInt(mb[2]!);
  return seq === 0n ? 0 : seq < 0n ? -1 : 1;
}

/** Validates one event read back from Redis; undefined when it is not one (never throws). */
export function toStoredEvent(id: unknown, value: unknown): StoredWebEvent | undefined {
  if (typeof id !== 'string' || !isStreamId(id)) return undefined;
  const parsed = webEventSchema.safeParse(value);
  return parsed.success ? { ...parsed.data, id } : undefined;
}

/** Parses one stored event's JSON; undefined when it is not one (never throws). */
export function parseStoredEvent(id: string, json: string): StoredWebEvent | undefined {
  try {
    return toStoredEvent(id, JSON.parse(json));
  } catch {
    return undefined;
  }
}
