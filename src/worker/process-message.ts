import type { AgentApi } from '../agent-api/types.js';
import { explainFailure } from '../agent-api/problem-words.js';
import type { DropLogWriter } from '../diagnostics/drop-log.js';
import { errorFields } from '../logger.js';
import { clipAtWord } from '../core/scrub.js';
import type { AgentAccounts } from '../accounts/agent-accounts.js';
import type { ReplyPort, ReplyPorts } from '../core/reply-port.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { Fence, Mailbox, MailboxHead, ProgressFields } from '../queue/mailbox.js';
import { MessageScope, patiently } from './message-scope.js';
import type { ChatMessage, GaveUp } from '../queue/types.js';
import { decide, giveUpReason, postingPatiently, type Decision, type RetryPolicy } from './error-policy.js';
import { answerLostNotice, newReference } from './plain-words.js';
import { renderReply } from './render-reply.js';
import { promptFor } from './thread-context.js';
import { noticesByPlatform } from '../ingress/notices.js';
import type { PlatformVocabulary } from '../core/platform-context.js';
import type { Platform } from '../core/conversation.js';
import type { FailureLog } from '../diagnostics/failure-log.js';
import { BridgeError, CALL_MAY_HAVE_RUN, type ErrorKind } from '../core/errors.js';
import { WorkingIndicator } from './working-indicator.js';
import { DELIVERY_MAX_HOLD_MS, DELIVERY_PLACES, DeliveryGate } from './delivery-gate.js';
import { oncePer } from '../core/once-per.js';
import { leaveToAnotherWorker } from './platform-coverage.js';


/** Platform error kinds that mean the platform answered and stored nothing. */
const REFUSED_POST: ReadonlySet<ErrorKind> = new Set(['rate_limited', 'refused', 'bad_request', 'unauthorized', 'forbidden', 'not_found']);
/**
 * Under at-least-once, the calls of one message a worker may die during: after the second, the
 * message is not called a third time (the user reads that the answer was lost).
 */
export const MAX_CRASHED_CALLS = 2;

/** How long a billed answer waits for a Redis that refuses writes (OOM) to take it: the job's retry would call again. */
const ANSWER_HOLD_MS = 5 * 60_000;

/** `posting` when no post is under way (an earlier one was refused). */
const NOTHING_UNDER_WAY = -1;

export interface MessageProcessorOptions {
  agent: AgentApi;
  /**
   * Replaces the process's secrets (API keys, sessions, tokens, credential values) in an
   * answer before it is stored or posted: an agent that echoes one must not put it in chat.
   */
  redact?: (text: string) => string;
  /** Per-workspace agent accounts: each message is sent with its workspace's own key. */
  accounts?: AgentAccounts;
  ports: ReplyPorts;
  mailbox: Mailbox;
  logger: Logger;
  metrics: Metrics;
  retry: RetryPolicy;
  failures: FailureLog;
  drops?: DropLogWriter;
  threadContext: { maxMessages: number; maxChars: number };
  /**
   * What a message whose agent call started but never recorded an answer (the worker died
   * during the call) gets: called again once (`at-least-once`: at most two such calls billed;
   * after a second crash during its call, the notice) or a notice that the answer was lost
   * (`at-most-once`). @defaultValue 'at-least-once'
   */
  callGuarantee?: 'at-least-once' | 'at-most-once';
  /** Most chunks one reply is posted as; a longer one is cut, ending with a note. @defaultValue 10 */
  maxReplyChunks?: number;
  /**
   * How long the agent may take before the working indicator shows (0 = at once); it never
   * holds up the call or the reply. @defaultValue 0
   */
  workingIndicatorDelayMs?: number;
  /** Each platform's wording (its command name) for the notices the worker posts. */
  vocabularies?: Partial<Record<Platform, PlatformVocabulary>>;
  /**
   * How many answered messages post their replies at once, and how long one slow post keeps
   * its place (delivery-gate.ts). @defaultValue { concurrency: 64, maxHoldMs: 250 }
   */
  delivery?: { concurrency: number; maxHoldMs: number };
}

/** An answer recorded and ready to post: what `deliver` needs of `process`. */
interface Delivery {
  m: ChatMessage;
  messageId: string;
  port: ReplyPort;
  progress: MailboxHead['progress'];
  scope: MessageScope;
  indicator: WorkingIndicator;
  /** The agent's answer, as recorded. */
  reply: string;
  /** The first chunk not posted yet. */
  first: number;
  /** When the write that stored the answer (and marked chunk `first` under way) was sent, if this attempt made it. */
  recordedAt: number | undefined;
  agentMessageId: string | undefined;
  agentMs: number | undefined;
}

/** A message with its stored record present (the worker skips those whose record is lost). */
export type ReadyHead = MailboxHead & { message: ChatMessage };

export type StepResult =
  | { outcome: 'replied' | 'gave_up' }
  /** Another worker owns the job now (this one was paused past its lock): stop, post nothing. */
  | { outcome: 'lost' }
  | { outcome: 'retry'; decision: Exclude<Decision, { action: 'give-up' }> };

/**
 * Answers one message: agent call, then each reply chunk. Before every visible step (the
 * call, each post) it records what it is about to do in one fenced round trip, which is also
 * the ownership check: a worker whose job lock was taken over stops there, before the step.
 * A retry (or another worker after a crash) thus never repeats a recorded step, and knows
 * which post may already be out (`ChunkInfo.mayExist`).
 * Redis errors propagate (the job is retried); agent and platform errors are decided here.
 */
export class MessageProcessor {
  private readonly noticesOf: ReturnType<typeof noticesByPlatform>;

  private readonly gate: DeliveryGate;

  /** One error line per platform a minute, not one per message, while a worker lacks its settings. */
  private readonly noPortWarning = oncePer(60_000);

  constructor(private readonly options: MessageProcessorOptions) {
    this.noticesOf = noticesByPlatform(options.vocabularies);
    this.gate = new DeliveryGate(options.delivery?.concurrency ?? DELIVERY_PLACES, options.delivery?.maxHoldMs ?? DELIVERY_MAX_HOLD_MS);
  }

  /**
   * How many calls of a message may end with the worker dying during them (started, and no
   * answer nor error recorded) before it is given up with the "answer lost" notice instead of
   * being called again: 1 under at-most-once, 2 under at-least-once (a crash loop, an OOM killer
   * or a liveness probe, bills at most two calls per message).
   */
  private get crashedCallsAllowed(): number {
    return this.options.callGuarantee === 'at-most-once' ? 1 : MAX_CRASHED_CALLS;
  }

  /**
   * Whether the worker should read each head with `startCall` (Mailbox.acquire): the read then
   * is the fenced "call started" write. Not under at-most-once, where that mark means "never
   * call again" and so must be written only once nothing stands between it and the call.
   */
  get startsCallOnRead(): boolean {
    return this.options.callGuarantee !== 'at-most-once';
  }

  /** `text` with the process's secrets replaced: for whatever is stored in Redis or posted in chat. */
  private redact(text: string): string {
    return this.options.redact ? this.options.redact(text) : text;
  }

  /** The same, as a function a port may keep (ChunkInfo.redact). */
  private readonly redactor = (text: string): string => this.redact(text);

  /** Answers recorded and waiting for their turn to post (delivery-gate.ts). */
  get repliesWaiting(): number {
    return this.gate.waiting;
  }

  async process({ messageId, message: m, progress, callFencedUntil }: ReadyHead, fence: Fence): Promise<StepResult> {
    const port = this.options.ports[m.platform];
    const scope = new MessageScope(this.options.logger, this.options.mailbox, m, messageId, fence);
    if (!port) return leaveToAnotherWorker(m, progress.started, scope, this.noPortWarning);
    // A worker gave up on it and stopped before finishing: its notice is said again, nothing is called.
    if (progress.gaveUp !== undefined) return this.resumeGiveUp(m, port, progress.gaveUp, scope);

    let reply = progress.reply;
    let agentMessageId = progress.agentMessageId;
    let first = progress.posted;
    let recordedAt: number | undefined;
    let agentMs: number | undefined;
    const earlierAttempt = progress.started > 0 || progress.reply !== undefined || progress.attempts > 0 || progress.limited > 0;
    const indicator = new WorkingIndicator(port, m.reply, this.options.workingIndicatorDelayMs ?? 0, scope, earlierAttempt);
    if (reply === undefined) {
      if (progress.started >= this.crashedCallsAllowed) {
        // Calls were made (maybe billed) and their answers died with the worker: no more of them.
        return this.answerLost(m, port, scope, progress.started);
      }
      const agent = this.options.accounts ? await this.options.accounts.forWorkspace(m.platform, m.workspaceId) : this.options.agent;
      // Its account was removed after the message was queued: nobody to bill, so no call.
      if (!agent) return this.noAccount(m, port, scope);
      // The fenced acquire/advance that returned this message checked ownership just before
      // the working indicator. Right before the (billed) call, ownership must still hold: either
      // that read marked the call started and renewed the lock, which has not lapsed yet, or
      // this write checks it again (and is the "call started" mark at-most-once relies on).
      indicator.begin();
      let prompt: string;
      try {
        // A message that already waited out a 429 does not wait for its thread again.
        prompt = await promptFor(m, port, this.options.threadContext, () => scope.log(), progress.limited > 0);
        // A platform that refused the bot's token cannot take the answer: no call is billed for it.
        await port.ready?.(m.reply);
      } catch (err) {
        // The platform's 429 on the thread, or its refusal, before the billed call: no cost.
        indicator.settle();
        return this.onError(m, port, progress, err, scope, indicator);
      }
      const fencedByRead = callFencedUntil !== undefined && performance.now() < callFencedUntil && !fence.abandoned?.();
      // The count this call makes (the read that marked it wrote the same).
      if (!fencedByRead && !(await scope.record({ started: progress.started + 1 }))) return (indicator.settle(), this.lost(scope.log()));
      const started = performance.now();
      try {
        ({ response: reply, messageId: agentMessageId } = await agent.chat(m.instanceId, prompt));
      } catch (err) {
        return this.onError(m, port, progress, err, scope, indicator);
      } finally {
        indicator.settle();
        agentMs = Math.round(performance.now() - started);
        if (this.options.logger.isLevelEnabled('debug')) scope.log().debug({ ms: agentMs }, 'agent call finished');
      }
      first = 0;
      reply = this.redact(reply);
      const answer: ProgressFields = { reply, posting: 0 };
      if (agentMessageId) answer.agentMessageId = agentMessageId;
      // The call is billed: keep trying to record its answer through a Redis blip. The same
      // write marks chunk 0 as under way, so posting it needs no other round trip.
      recordedAt = performance.now();
      // The answered mark lets the thread's later messages through without a mention; an
      // "Ask the agent" answer is about one message and does not make the bot a participant.
      const joinsThread = m.origin !== 'shortcut';
      if (!(await patiently(() => scope.record(answer, joinsThread), { refusedForMs: ANSWER_HOLD_MS, log: () => scope.log() }))) return this.lost(scope.log());
    }
    // The answer is recorded: posting it takes its turn behind the answers that came in first.
    const delivery: Delivery = { m, messageId, port, progress, scope, indicator, reply, first, recordedAt, agentMessageId, agentMs };
    return this.gate.run(() => this.deliver(delivery));
  }

  /** Posts a recorded answer's chunks from `first` on, each after its fenced record. */
  private async deliver({ m, messageId, port, progress, scope, indicator, reply, first, recordedAt, agentMessageId, agentMs }: Delivery): Promise<StepResult> {
    const chunks = renderReply(port, reply, { maxChunks: this.options.maxReplyChunks ?? 10, redact: (t) => this.redact(t), log: () => scope.log() });
    // The answer's record also marked chunk `first` as under way and renewed the job's lock;
    // unless the wait for this turn outlasted half that lock, the post needs no other check.
    const postingRecorded = recordedAt !== undefined && scope.ownedUntilFrom(recordedAt) > performance.now();
    for (let i = first; i < chunks.length; i++) {
      // An earlier attempt started this post and never recorded the next step: it may be out.
      const mayExist = i === progress.posted && progress.posting === i;
      if (!(i === first && postingRecorded)) {
        // One fenced write: chunk i-1 is posted, chunk i is under way (and ownership holds).
        const owned = await patiently(() => scope.record({ posted: i, posting: i }), { log: () => scope.log() });
        if (!owned) return this.lost(scope.log());
      }
      // A signal shown while the agent worked lands before the reply it announces.
      if (i === first) await indicator.landed();
      try {
        await port.postChunk(m.reply, chunks[i]!, i, { messageId, total: chunks.length, mayExist, agentMessageId, instanceId: m.instanceId, redact: this.redactor });
      } catch (err) {
        return this.onError(m, port, progress, err, scope, indicator, true);
      }
    }
    // The last "posted" record is the worker's advance, which deletes the message record. The
    // signal comes down beside it: the next message need not wait for that platform call.
    void indicator.end('ok');
    this.options.metrics.messages.inc({ platform: m.platform, outcome: 'replied' });
    // The operator's one line per answer at info: who and how fast, never what was said.
    this.options.logger.info(
      { conversationId: m.conversationId, messageId, instanceId: m.instanceId, platform: m.platform, agentMs, chunks: chunks.length },
      'message answered',
    );
    return { outcome: 'replied' };
  }

  /**
   * The worker died during the call as often as the guarantee allows (`crashes` times: once
   * under at-most-once, twice under at-least-once); tell the user, record it as a failure.
   */
  private async answerLost(m: ChatMessage, port: ReplyPort, scope: MessageScope, crashes: number): Promise<StepResult> {
    const ref = newReference();
    const notice = `${answerLostNotice} (ref ${ref})`;
    // Fenced, and what a worker resuming after a crash from here on says again (resumeGiveUp).
    if (!(await scope.record({ gaveUp: JSON.stringify({ ref, notice } satisfies GaveUp) }))) return this.lost(scope.log());
    const guarantee = this.options.callGuarantee ?? 'at-least-once';
    this.options.logger.warn(
      { ref, conversationId: m.conversationId, messageId: m.messageId, instanceId: m.instanceId, crashes, guarantee },
      'answer lost in a restart; not calling the agent again',
    );
    await this.options.failures.record({
      ref,
      platform: m.platform,
      conversationId: m.conversationId,
      instanceId: m.instanceId,
      reason: `answer lost: the worker stopped during the agent call ${crashes === 1 ? 'once' : `${crashes} times`} (AGENT_CALL_GUARANTEE=${guarantee})`,
      at: Date.now(),
    });
    await port
      .postNotice(m.reply, notice, { messageId: scope.messageId, mayExist: false })
      .catch((e) => this.options.logger.warn({ ref, ...errorFields(e) }, 'could not tell the user the answer was lost'));
    await port.stopWorking?.(m.reply, 'failed').catch(() => {});
    this.options.metrics.messages.inc({ platform: m.platform, outcome: 'gave_up' });
    return { outcome: 'gave_up' };
  }

  /** Per-workspace accounts: the workspace has none (any more); say so, call nothing. */
  private async noAccount(m: ChatMessage, port: ReplyPort, scope: MessageScope): Promise<StepResult> {
    const notice = this.noticesOf(m.platform).noAccount;
    // Fenced, before it is said, as a give-up is: a worker that resumes the message after a crash
    // looks for this notice (resumeGiveUp) instead of saying it a second time.
    if (!(await scope.record({ gaveUp: JSON.stringify({ ref: newReference(), notice } satisfies GaveUp) }))) return this.lost(scope.log());
    this.options.logger.warn({ conversationId: m.conversationId, messageId: m.messageId, workspaceId: m.workspaceId }, 'no agent account for this workspace; message not sent');
    await port
      .postNotice(m.reply, notice, { messageId: scope.messageId, mayExist: false })
      .catch((e) => this.options.logger.warn({ ...errorFields(e) }, 'could not post a notice'));
    this.options.metrics.messages.inc({ platform: m.platform, outcome: 'gave_up' });
    return { outcome: 'gave_up' };
  }

  private lost(log: Logger): StepResult {
    log.warn('lost the job lock (this worker was paused or too slow); another worker answers instead');
    return { outcome: 'lost' };
  }

  private async onError(
    m: ChatMessage,
    port: ReplyPort,
    progress: MailboxHead['progress'],
    err: unknown,
    scope: MessageScope,
    indicator: WorkingIndicator,
    posting = false,
  ): Promise<StepResult> {
    let decision = decide(err, progress.attempts, this.options.retry, postingPatiently(err, posting, m.receivedAt) ? 0 : progress.limited);
    if (decision.action === 'give-up') return this.giveUp(m, port, err, indicator, scope);
    // Per-workspace accounts: a 429 limits this workspace's account, not the others'; only its
    // message waits (the next of that account that hits the limit waits too).
    if (decision.action === 'rate-limit' && this.options.accounts) decision = { action: 'retry', delayMs: decision.delayMs, counts: false };
    if (this.options.callGuarantee === 'at-most-once' && err instanceof BridgeError && err.code === CALL_MAY_HAVE_RUN) {
      // Sent, and no answer came back: the service may have run (and billed) it. Never call twice.
      this.options.logger.info({ conversationId: m.conversationId, messageId: m.messageId, ...errorFields(err) }, 'not retrying a call the agent service may have run (at-most-once)');
      return this.giveUp(m, port, err, indicator, scope);
    }
    const counted = decision.action === 'retry' && decision.counts;
    // The failed call is over, so the retry calls again whatever the guarantee: its own "started"
    // mark is taken back, and only the calls the worker died during before it stay counted.
    const started = progress.started || '';
    const fields: ProgressFields = counted ? { attempts: progress.attempts + 1, started } : { limited: progress.limited + 1, started };
    // The platform answered "no" to the post (a 429, a refusal): it stored nothing, so the retry
    // posts without first reading the thread back for it.
    if (err instanceof BridgeError && err.source !== 'agent' && REFUSED_POST.has(err.kind)) fields.posting = NOTHING_UNDER_WAY;
    if (!(await scope.record(fields))) return this.lost(this.options.logger);
    this.options.logger.info(
      { conversationId: m.conversationId, messageId: m.messageId, ...errorFields(err), decision },
      'will retry the message',
    );
    return { outcome: 'retry', decision };
  }

  private async giveUp(m: ChatMessage, port: ReplyPort | undefined, err: unknown, indicator?: WorkingIndicator, scope?: MessageScope): Promise<StepResult> {
    const ref = newReference();
    const notice = port && m.errorPolicy === 'reply' ? this.redact(`${explainFailure(err)} (ref ${ref})`) : undefined;
    // Fenced, before anything is said: a worker that resumes the message after a crash from here
    // on says this again (resumeGiveUp) and never calls the agent for it a second time.
    if (scope && !(await patiently(() => scope.record({ gaveUp: JSON.stringify({ ref, notice } satisfies GaveUp) })))) return this.lost(scope.log());
    this.options.logger.warn(
      { ref, conversationId: m.conversationId, messageId: m.messageId, instanceId: m.instanceId, ...errorFields(err) },
      'gave up on a message',
    );
    // A platform or the agent service may quote a token or a credential value in its error:
    // redacted whole, before the cut, since the failure log is shown in the admin pane.
    const reason = err instanceof BridgeError ? this.redact(`${err.source} ${err.kind}: ${err.message}`) : 'internal error';
    await this.options.failures.record({
      ref,
      platform: m.platform,
      conversationId: m.conversationId,
      instanceId: m.instanceId,
      reason: clipAtWord(reason, 300),
      at: Date.now(),
    });
    await this.options.drops
      ?.record(m.platform, m.channelId, { messageId: m.messageId, userId: m.userId, reason: giveUpReason(err), at: Date.now(), ref })
      .catch(() => {});
    // Recorded before the user is told, so whatever they see is already on file.
    if (port) {
      // A signal shown while the agent worked lands before the notice.
      await indicator?.landed();
      if (notice !== undefined) {
        await port
          .postNotice(m.reply, notice, { messageId: scope?.messageId ?? m.messageId, mayExist: false })
          .catch((e) => this.options.logger.warn({ ref, ...errorFields(e) }, 'could not tell the user about the failure'));
      }
      const outcome = m.errorPolicy === 'silent' ? 'ok' : 'failed';
      await (indicator ? indicator.end(outcome) : port.stopWorking?.(m.reply, outcome).catch(() => {}));
    }
    this.options.metrics.messages.inc({ platform: m.platform, outcome: 'gave_up' });
    return { outcome: 'gave_up' };
  }

  /**
   * A worker recorded that it gave up on the message (giveUp, answerLost) and stopped before
   * finishing it: the user is told, with the same reference, unless the port finds the notice the
   * first worker posted; the agent is never called. Already in the failure log.
   */
  private async resumeGiveUp(m: ChatMessage, port: ReplyPort, mark: string, scope: MessageScope): Promise<StepResult> {
    const { ref, notice, withdrawn } = JSON.parse(mark) as GaveUp;
    if (!(await scope.record({}))) return this.lost(scope.log());
    if (withdrawn) {
      scope.log().info({ ref }, 'the message was deleted before it was answered: not calling the agent');
      this.options.metrics.messages.inc({ platform: m.platform, outcome: 'gave_up' });
      return { outcome: 'gave_up' };
    }
    scope.log().warn({ ref }, 'resuming a message given up on before a restart: telling the user unless they were told, not calling the agent');
    if (notice !== undefined) {
      // The first worker may have posted it and died before its end was recorded: the port looks first.
      await port
        .postNotice(m.reply, notice, { messageId: scope.messageId, mayExist: true })
        .catch((e) => this.options.logger.warn({ ref, ...errorFields(e) }, 'could not tell the user about the failure'));
    }
    await port.stopWorking?.(m.reply, m.errorPolicy === 'silent' ? 'ok' : 'failed').catch(() => {});
    this.options.metrics.messages.inc({ platform: m.platform, outcome: 'gave_up' });
    return { outcome: 'gave_up' };
  }
}
