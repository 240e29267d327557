import type { Logger } from '../logger.js';
import { ownedUntil, type Fence, type Mailbox, type ProgressFields } from '../queue/mailbox.js';
import type { ChatMessage } from '../queue/types.js';
import { isRedisConnectionError, isRedisRefusingWrites, redisRefusalWords } from '../redis-errors.js';
import { errorFields } from '../logger.js';
import { oncePer } from '../core/once-per.js';

/** Redis refusing writes is said once a minute per process, not once per message held. */
const refusalLine = oncePer(60_000);

/** How long {@link patiently} keeps trying, and who says that Redis refuses writes. */
export interface Patience {
  /** While Redis is unreachable. @defaultValue 20 000 */
  forMs?: number;
  /** While Redis answers but refuses writes (out of memory, read-only). @defaultValue forMs */
  refusedForMs?: number;
  /** The logger of the line that says Redis refuses writes (once a minute per process). */
  log?: () => Logger;
}

/**
 * Runs a Redis write that records an effect already done, retrying while Redis is unreachable
 * or refuses writes for now (out of memory, a read-only replica after a failover), instead of
 * failing the job and repeating the effect (a second billed call).
 */
export async function patiently<T>(write: () => Promise<T>, { forMs = 20_000, refusedForMs = forMs, log }: Patience = {}): Promise<T> {
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      const refused = isRedisRefusingWrites(err);
      if (!(refused || isRedisConnectionError(err)) || Date.now() - started >= (refused ? refusedForMs : forMs)) throw err;
      const words = redisRefusalWords(err);
      if (words !== undefined && log && refusalLine(words)) log().error({ ...errorFields(err) }, `${words}; holding what was done until it does`);
      await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** attempt, 1000)));
    }
  }
}

/**
 * One message's logger (a child logger, built only when a line is written: most messages write
 * none below info, and one per message was a measurable share of the worker's CPU) and its
 * fenced progress record. A class: thousands of messages may be in flight, and closures per
 * message cost more (tsx names each one, which makes its properties a dictionary).
 */
export class MessageScope {
  private child: Logger | undefined;

  /** Redis lost the message's record (see record); said once per message. */
  private gone = false;

  constructor(
    private readonly logger: Logger,
    private readonly mailbox: Mailbox,
    private readonly m: ChatMessage,
    readonly messageId: string,
    private readonly fence: Fence,
  ) {}

  log(): Logger {
    return (this.child ??= this.logger.child({ conversationId: this.m.conversationId, messageId: this.messageId, instanceId: this.m.instanceId }));
  }

  /**
   * Until when the job's lock, renewed by a record sent at `sentAt`, surely still holds
   * (mailbox.ts `ownedUntil`). `sentAt` when records do not renew it, or the worker gave its
   * jobs back; never ending for an unfenced writer.
   */
  ownedUntilFrom(sentAt: number): number {
    if (this.fence.abandoned?.()) return sentAt;
    return this.fence.token ? ownedUntil(sentAt, this.fence.lockDurationMs ?? 0) : Infinity;
  }

  async record(fields: ProgressFields, answered = false): Promise<boolean> {
    const r = await this.mailbox.record(this.m.conversationId, this.messageId, this.fence, fields, { answered });
    if (r !== 'gone') return r;
    // Redis lost the message with its seen mark (it restarted without persistence): nobody else
    // has it, so this worker goes on with what it holds (an answer in hand is posted), unrecorded.
    if (!this.gone) {
      this.gone = true;
      this.log().error({ step: Object.keys(fields) }, 'the message is gone from Redis (restarted without persistence?); going on without recording its progress');
    }
    return true;
  }
}
