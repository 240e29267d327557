import { randomUUID } from 'node:crypto';
import { dmBindingChannel } from '../bindings/dm.js';
import type { Binding, BindingStore } from '../bindings/types.js';
import type { DropLogWriter } from '../diagnostics/drop-log.js';
import { errorFields } from '../logger.js';
import { withTimeout } from '../core/with-timeout.js';
import type { AgentAccounts } from '../accounts/agent-accounts.js';
import type { QuotaLimits } from '../config/load.js';
import { encodeConversationId, type Platform } from '../core/conversation.js';
import type { IncomingMessage } from '../core/message.js';
import type { ReplyPorts } from '../core/reply-port.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { ChatQueue, EnqueueResult, Unstored } from '../queue/chat-queue.js';
import { jobIdFor, type ChatMessage } from '../queue/types.js';
import type { PlatformVocabulary } from '../core/platform-context.js';
import { notices, noticesByPlatform } from './notices.js';
import { isRedisConnectionError } from '../redis-errors.js';
import { describeQuotaHit } from '../quota/message.js';
import type { QuotaResult } from '../quota/quota.js';
import type { SeenLedger } from './seen-ledger.js';
import { hasVisibleText } from '../core/visible-text.js';
import { fittedText } from './forwarded-fit.js';
import type { DropReason, HandleOptions, Ingress, IngressResult } from './types.js';

/** Quota check before a job is queued (src/quota). */
export interface QuotaGate {
  consume(args: {
    platform: Platform;
    channelId: string;
    userId: string;
    overrides?: Partial<QuotaLimits>;
  }): Promise<QuotaResult>;
}



export interface IngressOptions {
  bindings: BindingStore;
  queue: ChatQueue;
  /** Which messages were queued before: a redelivery is not charged to a quota again. */
  seen: Pick<SeenLedger, 'accepted'>;
  ports: ReplyPorts;
  logger: Logger;
  metrics: Metrics;
  maxMessageChars: number;
  quota?: QuotaGate;
  /** Whether any quota is configured at all; when not, the check is skipped. */
  quotasActive?: (binding: Binding) => boolean;
  drops?: DropLogWriter;
  /** How long to keep trying to enqueue while Redis is unreachable. @defaultValue 10000 */
  enqueueRetryMs?: number;
  /**
   * After that, how long to wait for Redis to say whether the message was stored before telling
   * the user anything (a push already written may still run when a stalled Redis resumes).
   * @defaultValue 20000
   */
  enqueueSettleMs?: number;
  /** Per-workspace agent accounts: messages of a workspace without one are not queued. */
  accounts?: AgentAccounts;
  /**
   * Each platform's words for its notices (its module's `vocabulary`).
   * @defaultValue `/agent` and the default wording, for every platform
   */
  vocabularies?: Partial<Record<Platform, PlatformVocabulary>>;
}

/** A user of a workspace without an agent account hears it once an hour. */
const NO_ACCOUNT_NOTICE_WINDOW_SECONDS = 3_600;

/** A user refused as "busy" hears it once per this many seconds, however many messages they send. */
const BUSY_NOTICE_WINDOW_SECONDS = 60;

/**
 * Refusals whose notice is the same every time (not connected, nothing to send, too long): each
 * message gets its answer, but a user's flood of them in one channel gets at most
 * REPEATED_NOTICES_PER_WINDOW per window (Discord allows 5 posts per channel per 5 s), so the
 * notices cannot crowd out the channel's answers.
 */
const REPEATED_NOTICES: ReadonlySet<DropReason> = new Set(['not_bound', 'empty', 'too_long']);
const REPEATED_NOTICES_PER_WINDOW = 5;
const REPEATED_NOTICE_WINDOW_SECONDS = 10;

/** Messages from other bots answered per channel per window (DISCORD_ALLOW_BOTS). */
const BOT_TURNS_PER_CHANNEL = 20;
const BOT_TURN_WINDOW_SECONDS = 600;

/** The single entry point of every adapter (see src/ingress/types.ts). */
export function createIngress(options: IngressOptions): Ingress {
  const retryFor = options.enqueueRetryMs ?? 10_000;
  const settleFor = options.enqueueSettleMs ?? 20_000;
  /** The notices in the words of the message's platform. */
  const noticesOf = noticesByPlatform(options.vocabularies);

  /**
   * Posts a notice without holding up the caller: an adapter handles a channel's messages in
   * order, and a notice waiting out the platform's rate limit must not delay the next message.
   */
  const notify = (m: IncomingMessage, text: string): void => {
    const port = options.ports[m.platform];
    if (!port) return;
    void port.postNotice(m.reply, text).catch((err: Error) => options.logger.warn({ ...errorFields(err) }, 'could not post a notice'));
  };

  /** What a claim lost to another delivery returns: that delivery does whatever is due. */
  const duplicate = (m: IncomingMessage): IngressResult => {
    options.metrics.ingress.inc({ platform: m.platform, result: 'duplicate' });
    return { status: 'duplicate', jobId: jobIdFor(m.platform, m.messageId) };
  };

  /** Drops that do nothing a repeat could do twice (no notice, no record worth one). */
  const quietDrops: ReadonlySet<DropReason> = new Set(['self', 'bot', 'not_addressed', 'redis_unavailable']);

  const dropMessage = async (m: IncomingMessage, reason: DropReason, notice?: string, claimed?: () => Promise<boolean>): Promise<IngressResult> => {
    if (claimed && !quietDrops.has(reason) && !(await claimed())) return duplicate(m);
    options.logger.debug({ platform: m.platform, messageId: m.messageId, channelId: m.bindingChannelId, reason }, 'message dropped');
    options.metrics.ingress.inc({ platform: m.platform, result: reason });
    // The user hears first: the diagnostics write may itself wait on an unreachable Redis.
    if (notice && (!REPEATED_NOTICES.has(reason) || (await withinNoticeAllowance(m, reason)))) notify(m, notice);
    // Own messages would flood the list the bot's replies; everything else is worth explaining.
    if (reason !== 'self') {
      const write = options.drops
        ?.record(m.platform, m.bindingChannelId, { messageId: m.messageId, userId: m.userId, reason, at: Date.now() })
        .catch(() => {});
      if (reason !== 'redis_unavailable') await write;
    }
    return { status: 'dropped', reason };
  };

  /** Whether this user's repeated notice of this kind in this channel is within the window's allowance. */
  const withinNoticeAllowance = async (m: IncomingMessage, reason: DropReason): Promise<boolean> => {
    const id = `${m.userId}:${m.bindingChannelId}`;
    // When Redis can't say, tell the user: a missing answer is worse than a repeated notice.
    const sent = await options.queue.countInWindow(`notice-${reason}`, m.platform, id, REPEATED_NOTICE_WINDOW_SECONDS).catch(() => 0);
    return sent <= REPEATED_NOTICES_PER_WINDOW;
  };

  /** Whether this user is due a refusal notice of this kind (at most one per window). */
  const firstNotice = (m: IncomingMessage, kind: string, windowSeconds: number) =>
    // When Redis can't say, tell the user: a missing answer is worse than a repeated notice.
    options.queue.firstNotice(kind, m.platform, m.userId, windowSeconds).catch(() => true);

  /**
   * Another bot is answered only when it mentions this one (not for a reply, a thread follow-up
   * or a channel in `all` mode), and at most BOT_TURNS_PER_CHANNEL times per window per channel:
   * two bots that answer each other would loop, each turn a billed call.
   */
  const mayAnswerBot = async (m: IncomingMessage): Promise<boolean> => {
    if (!m.mentionsBot) return false;
    const turns = await options.queue.countInWindow('bot-turns', m.platform, m.bindingChannelId, BOT_TURN_WINDOW_SECONDS).catch(() => 0);
    if (turns <= BOT_TURNS_PER_CHANNEL) return true;
    if (turns === BOT_TURNS_PER_CHANNEL + 1) {
      options.logger.warn({ platform: m.platform, channelId: m.bindingChannelId, botUserId: m.userId }, 'bot messages in this channel are ignored for now: too many in a row (two bots answering each other?)');
    }
    return false;
  };

  /** Per-workspace accounts: whether the message's workspace has one (when Redis can't say, yes: the worker checks again). */
  const hasAccount = async (m: IncomingMessage) =>
    !options.accounts || Boolean(await options.accounts.forWorkspace(m.platform, m.conversation.workspaceId).catch(() => true));

  /**
   * The binding that answers: the instance channel's (an assistant thread's context channel), else
   * the message's own channel's; a direct message without one uses its workspace's DM binding.
   */
  const lookupBinding = async (m: IncomingMessage) => {
    const chooser = m.instanceChannelId ?? m.bindingChannelId;
    const own = await options.bindings.get(m.platform, chooser);
    if (own || !m.isDirect) return own;
    const dm = dmBindingChannel(m.conversation.workspaceId);
    return dm === chooser ? undefined : options.bindings.get(m.platform, dm);
  };

  /** The quota overrides of the message's own channel (not those of the channel that chose the instance). */
  const quotaOverrides = async (m: IncomingMessage, binding: Binding) =>
    m.instanceChannelId === undefined ? binding.quota : (await options.bindings.get(m.platform, m.bindingChannelId).catch(() => undefined))?.quota;

  return {
    async handle(m, handleOptions: HandleOptions = {}) {
      // The adapter's claim, taken at most once, and only where a repeat must be stopped.
      let claim: Promise<boolean> | undefined;
      const claimed = handleOptions.claim ? () => (claim ??= handleOptions.claim!()) : undefined;
      const drop = (m: IncomingMessage, reason: DropReason, notice?: string) => dropMessage(m, reason, notice, claimed);
      if (m.fromSelf) return drop(m, 'self');
      if (m.fromBot) return drop(m, 'bot');
      if (m.fromAllowedBot && !(await mayAnswerBot(m))) return drop(m, 'bot');

      // One bound for the whole message: Redis may be restarting while it arrives.
      const deadline = Date.now() + retryFor;
      const binding = await withRedisRetry(() => lookupBinding(m), deadline, options.logger).catch((err: unknown) => {
        if (!isRedisConnectionError(err)) throw err;
        return null;
      });
      if (binding === null) return unstored(m, [], drop);
      const explicitlyAddressed = m.isDirect || m.mentionsBot || m.repliesToBot;
      if (!binding) {
        // A workspace without an agent account can bind nothing yet: say what comes first.
        if (explicitlyAddressed && !(await hasAccount(m))) return drop(m, 'no_account', noticesOf(m.platform).noAccount);
        return drop(m, 'not_bound', explicitlyAddressed ? noticesOf(m.platform).notBound : undefined);
      }

      // Without the MessageContent intent an unreadable message can't be answered, whatever the mode.
      if (m.contentMissing && !explicitlyAddressed) return drop(m, 'content_missing');

      const conversationId = encodeConversationId(m.conversation);
      const addressed =
        explicitlyAddressed ||
        binding.mode === 'all' ||
        (m.conversation.threadId !== undefined && (await options.queue.isAnswered(conversationId).catch(() => false)));
      if (!addressed) return drop(m, 'not_addressed');

      if (!hasVisibleText(m.text)) return drop(m, 'empty', m.hasAttachments ? notices.attachmentsOnly : noticesOf(m.platform).empty);
      // A long forward is shortened; only the sender's own words being too long is refused.
      const fitted = fittedText(m, options.maxMessageChars);
      if ('refused' in fitted) return drop(m, 'too_long', notices.tooLong(fitted.refused, options.maxMessageChars));
      const text = fitted.text;

      // Per-workspace accounts: a workspace whose admin has not run `setup` has no one to bill.
      if (!(await hasAccount(m))) {
        const tell = await firstNotice(m, 'no-account', NO_ACCOUNT_NOTICE_WINDOW_SECONDS);
        return drop(m, 'no_account', tell ? noticesOf(m.platform).noAccount : undefined);
      }

      const overrides = options.quota ? await quotaOverrides(m, binding) : undefined;
      if (options.quota && (options.quotasActive?.({ ...binding, quota: overrides }) ?? true)) {
        // A redelivery must not be charged twice.
        if (claimed ? !(await claimed()) : await options.seen.accepted(m.platform, m.messageId).catch(() => false)) {
          return { status: 'duplicate', jobId: jobIdFor(m.platform, m.messageId) };
        }
        const verdict = await options.quota
          .consume({ platform: m.platform, channelId: m.bindingChannelId, userId: m.userId, overrides })
          .catch(() => ({ ok: true }) as const);
        if (!verdict.ok) {
          // One notice per user until the limit's window resets: a flood of refused messages
          // must not become a flood of public posts.
          const tell = await firstNotice(m, `quota-${verdict.scope}-${verdict.window}`, verdict.retryAfterMs / 1000);
          return drop(m, 'over_quota', tell ? describeQuotaHit(verdict, { direct: m.isDirect }) : undefined);
        }
      }

      const message: ChatMessage = {
        platform: m.platform,
        messageId: m.messageId,
        conversationId,
        workspaceId: m.conversation.workspaceId,
        channelId: m.bindingChannelId,
        instanceId: binding.instanceId,
        text,
        userId: m.userId,
        userName: m.userName,
        reply: m.reply,
        receivedAt: m.receivedAt,
        errorPolicy: binding.errorPolicy,
        context: m.forceThreadContext ? 'thread' : binding.context,
        ...(m.origin ? { origin: m.origin } : {}),
      };

      // Every push sent, kept: one that timed out may still run when Redis answers again.
      const pushes: Array<Tracked<EnqueueResult>> = [];
      const push = () => {
        const tracked = track(options.queue.enqueue(message));
        pushes.push(tracked);
        return tracked.promise;
      };
      const result = await withRedisRetry(push, Math.max(deadline, Date.now() + 1000), options.logger).catch((err: unknown) => {
        if (!isRedisConnectionError(err)) throw err;
        return undefined;
      });
      if (!result) return unstored(m, pushes, drop);
      return enqueued(m, result, conversationId, drop);
    },
  };

  /** A drop with the message's claim (Ingress.handle's). */
  type Drop = (m: IncomingMessage, reason: DropReason, notice?: string) => Promise<IngressResult>;

  /** What follows the push's answer: the busy notice, the `/agent why` record, the attachments note. */
  async function enqueued(m: IncomingMessage, result: EnqueueResult, conversationId: string, drop: Drop): Promise<IngressResult> {
    if (result.status === 'busy') {
      const tell = await firstNotice(m, 'busy', BUSY_NOTICE_WINDOW_SECONDS);
      return drop(m, 'channel_busy', tell ? notices.busy(result.pending) : undefined);
    }
    options.metrics.ingress.inc({ platform: m.platform, result: result.status });
    if (result.status === 'duplicate') return { status: 'duplicate', jobId: result.jobId };
    if (result.behindRetry) {
      // It waits behind a message that is being retried: worth explaining in `/agent why`.
      await options.drops
        ?.record(m.platform, m.bindingChannelId, { messageId: m.messageId, userId: m.userId, reason: 'queued', at: Date.now(), conversationId })
        .catch(() => {});
    }
    if (m.hasAttachments) notify(m, notices.attachments);
    return { status: 'queued', jobId: result.jobId };
  }

  /**
   * Redis gave no answer within the retry bound. A push already written is not withdrawn (ioredis
   * keeps it, and a stalled Redis runs it when it resumes: a slow fsync, a BGSAVE fork, a network
   * stall, a failover), so "couldn't accept" is said only once Redis says the message is not
   * stored, by the mark that also keeps a late push from storing it (ChatQueue.refuseUnstored),
   * and only by the caller that set the mark: one notice per message across ingress processes.
   * A push that answers meanwhile decides instead. When Redis says nothing for `settleFor` more:
   * with every push failed (Redis unreachable throughout), the user is told now; with an answer
   * still awaited, when it comes, if it says refused.
   */
  async function unstored(m: IncomingMessage, pushes: Array<Tracked<EnqueueResult>>, drop: Drop): Promise<IngressResult> {
    const mark = `refused:${randomUUID()}`;
    const until = Date.now() + settleFor;
    const ask = () => track(options.queue.refuseUnstored(m.platform, m.messageId, mark));
    let fence = ask();
    // A push that failed decides nothing (it may have run before its connection dropped): the fence does.
    const pushed = pushes.map((p) => p.promise.then((result) => ({ result }), () => new Promise<never>(() => {})));
    for (;;) {
      const outcome = await withTimeout(
        Promise.race([fence.promise.then((said) => ({ said }), (err: unknown) => ({ err })), ...pushed]),
        Math.max(0, until - Date.now()),
        () => undefined,
      );
      if (outcome && 'result' in outcome) return enqueued(m, outcome.result, encodeConversationId(m.conversation), drop);
      if (outcome && 'said' in outcome) {
        if (outcome.said === 'refused') return drop(m, 'redis_unavailable', notices.unavailable);
        // Stored: by this push (its answer, already read, is still passing through BullMQ), or by
        // another process's. Or refused by another process, which tells the user.
        const own = outcome.said === 'stored' && pushed.length > 0 ? await withTimeout(Promise.race(pushed), 1000, () => undefined) : undefined;
        return own ? enqueued(m, own.result, encodeConversationId(m.conversation), drop) : duplicate(m);
      }
      if (outcome && Date.now() < until) {
        // The fence failed without reaching Redis: ask again, with the same mark.
        await new Promise((r) => setTimeout(r, Math.min(500, Math.max(0, until - Date.now()))));
        fence = ask();
        continue;
      }
      break;
    }
    // Redis said nothing within the bound. Told only when it is known the message is not stored:
    // Redis says so, or every push failed (it was unreachable throughout; the last fence, sent
    // after them on their connection, failed too).
    const tell = (said: Unstored | undefined) => {
      if (said === 'refused' || (said === undefined && pushes.every((p) => p.settled))) return drop(m, 'redis_unavailable', notices.unavailable);
      if (said) return Promise.resolve(duplicate(m));
      options.logger.error({ platform: m.platform, messageId: m.messageId }, 'Redis has not said whether a message was stored, and a push of it may still run; the user is not told');
      return Promise.resolve<IngressResult>({ status: 'dropped', reason: 'redis_unavailable' });
    };
    const said = fence.promise.then((x): Unstored | undefined => x, () => undefined);
    if (fence.settled) return tell(await said);
    // The answer is still on its way (a connection that neither answers nor closes): the user
    // hears when it comes.
    options.logger.error({ platform: m.platform, messageId: m.messageId }, 'Redis has not said yet whether a message was stored; the user hears when it does, if it was not');
    void said.then(tell);
    return { status: 'dropped', reason: 'redis_unavailable' };
  }
}

/** A promise, and whether it has settled yet. */
interface Tracked<T> {
  promise: Promise<T>;
  settled: boolean;
}

function track<T>(promise: Promise<T>): Tracked<T> {
  const tracked: Tracked<T> = { promise, settled: false };
  promise.then(
    () => (tracked.settled = true),
    () => (tracked.settled = true),
  );
  return tracked;
}

/** Retries while Redis is unreachable, until `deadline`; rejects when it never answered. */
async function withRedisRetry<T>(fn: () => Promise<T>, deadline: number, logger: Logger): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      // BullMQ waits for a connection that isn't ready rather than failing: bound each try too.
      return await withTimeout(fn(), Math.max(500, deadline - Date.now()), () => {
        throw new RedisTimeoutError('Redis did not answer in time');
      });
    } catch (err) {
      if (!isRedisConnectionError(err)) throw err;
      if (Date.now() >= deadline) {
        logger.warn({ ...errorFields(err) }, 'Redis did not answer within the retry bound; waiting to learn whether the message was stored');
        throw err;
      }
      logger.warn({ attempt, ...errorFields(err) }, 'Redis unavailable; retrying');
      await new Promise((r) => setTimeout(r, Math.min(200 * 2 ** attempt, 2000, Math.max(0, deadline - Date.now()))));
    }
  }
}

class RedisTimeoutError extends Error {
  override name = 'RedisTimeoutError';
}


