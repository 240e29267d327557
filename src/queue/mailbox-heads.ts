/**
 * Reading what the mailbox scripts return (acquire-6.lua and the fused fetch): heads built with
 * every field at once, and the "call started" mark a read that renews the lock puts on them.
 */
import type { AcquireResult, MailboxHead } from './mailbox.js';
import type { ChatMessage } from './types.js';

/** acquire-6.lua's output: {'lost'} | {'held', holder} | {'empty'} | {'ok', head, record, queued}. */
export type AcquireReply = [string, string?, Array<string | null>?, number?];

export type CallStart = ReturnType<typeof startMark>;

/**
 * Until when (`performance.now()`) a job surely still holds its lock after a fenced write sent at
 * `sentAt` renewed it for `lockMs`: BullMQ gives a job away only once its lock lapsed, and half
 * the lock is kept as margin.
 */
export function ownedUntil(sentAt: number, lockMs: number): number {
  return sentAt + lockMs / 2;
}

/** A read that starts the call (`lockMs` > 0) renewed the lock at `sentAt` or later; marks the head it returns. */
export function startMark(lockMs: number, sentAt: number) {
  return {
    lockMs,
    mark<H extends MailboxHead>(head: H): H {
      // The script marks only a head that has a stored message, no reply, no give-up and no call started before.
      if (lockMs && head.message && head.progress.reply === undefined && head.progress.gaveUp === undefined && !(head.progress.started > 0)) {
        head.callFencedUntil = ownedUntil(sentAt, lockMs);
      }
      return head;
    },
  };
}

export function acquireResult(r: AcquireReply, start: CallStart): AcquireResult {
  if (r[0] === 'lost') return { status: 'lost' };
  if (r[0] === 'held') return { status: 'held', holder: r[1]! };
  return { status: 'ok', head: r[0] === 'ok' ? start.mark(toHead(r[1]!, r[2] ?? [], r[3])) : undefined };
}

/**
 * Builds a head from the scripts' HMGET (payload, reply, posted, attempts, limited, started,
 * posting, agentMessageId, gaveUp), every field present from the start: a head spread into a new
 * object and then given one more field got a hidden class of its own in V8 (about 300 bytes
 * per message in flight, and one more for the garbage collector to walk).
 */
export function toHead(messageId: string, record: Array<string | null>, queued?: number): MailboxHead {
  const [payload, reply, posted, attempts, limited, started, posting, agentMessageId, gaveUp] = record;
  return {
    messageId,
    callFencedUntil: undefined,
    queued,
    message: JSON.parse(payload ?? 'null') as ChatMessage | null,
    progress: {
      reply: reply ?? undefined,
      posted: Number(posted ?? 0),
      attempts: Number(attempts ?? 0),
      limited: Number(limited ?? 0),
      started: Number(started ?? 0) || 0,
      posting: posting == null ? undefined : Number(posting),
      agentMessageId: agentMessageId ?? undefined,
      gaveUp: gaveUp ?? undefined,
    },
  };
}
