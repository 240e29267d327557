import type { AgentAccounts } from '../accounts/agent-accounts.js';
import type { AgentApi } from '../agent-api/types.js';
import type { Platform } from '../core/conversation.js';
import { oncePer } from '../core/once-per.js';
import type { PlatformVocabulary } from '../core/platform-context.js';
import type { ReplyPort, ReplyPorts } from '../core/reply-port.js';
import type { DropLogWriter } from '../diagnostics/drop-log.js';
import type { FailureLog } from '../diagnostics/failure-log.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { Fence, Mailbox, MailboxHead, ProgressFields } from '../queue/mailbox.js';
import type { ChatMessage } from '../queue/types.js';
import { DELIVERY_MAX_HOLD_MS, DELIVERY_PLACES, DeliveryGate } from './delivery-gate.js';
import type { RetryPolicy } from './error-policy.js';
import { GiveUpSteps } from './give-up-steps.js';
import { MessageScope, patiently } from './message-scope.js';
import { leaveToAnotherWorker } from './platform-coverage.js';
import { renderReply } from './render-reply.js';
import { RetryOrGiveUp } from './retry-or-give-up.js';
import { lostJob, type StepResult } from './step-result.js';
import { promptFor } from './thread-context.js';
import { WorkingIndicator } from './working-indicator.js';

/**
 * Under at-least-once, the calls of one message a worker may die during: after the second, the
 * message is not called a third time (the user reads that the answer was lost).
 */
export const MAX_CRASHED_CALLS = 2;

/** How long a billed answer waits for a Redis that refuses writes (OOM) to take it: the job's retry would call again. */
const ANSWER_HOLD_MS = 5 * 60_000;

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
  /** The agent's answer as rendered for the port: recorded with it, or (resuming an older record) rendered now. */
  chunks: string[];
  /** The first chunk not posted yet. */
  first: number;
  /** When the write that stored the answer (and marked chunk `first` under way) was sent, if this attempt made it. */
  recordedAt: number | undefined;
  agentMessageId: string | undefined;
  agentMs: number | undefined;
}

/** A message with its stored record present (the worker skips those whose record is lost). */
export type ReadyHead = MailboxHead & { message: ChatMessage };

/**
 * Answers one message: agent call, then each reply chunk. Before every visible step (the
 * call, each post) it records what it is about to do in one fenced round trip, which is also
 * the ownership check: a worker whose job lock was taken over stops there, before the step.
 * A retry (or another worker after a crash) thus never repeats a recorded step, and knows
 * which post may already be out (`ChunkInfo.mayExist`).
 * Redis errors propagate (the job is retried); agent and platform errors are decided in
 * retry-or-give-up.ts, and the ways a message ends without an answer are in give-up-steps.ts.
 */
export class MessageProcessor {
  private readonly gate: DeliveryGate;

  /** One error line per platform a minute, not one per message, while a worker lacks its settings. */
  private readonly noPortWarning = oncePer(60_000);

  /** The notices said (and first recorded) when a message ends without an answer. */
  private readonly giveUps: GiveUpSteps;

  /** What a failed step leads to: a recorded retry, or a give-up. */
  private readonly retryOrGiveUp: RetryOrGiveUp;

  constructor(private readonly options: MessageProcessorOptions) {
    this.gate = new DeliveryGate(options.delivery?.concurrency ?? DELIVERY_PLACES, options.delivery?.maxHoldMs ?? DELIVERY_MAX_HOLD_MS);
    this.giveUps = new GiveUpSteps(options, this.redactor);
    this.retryOrGiveUp = new RetryOrGiveUp(options, this.giveUps);
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
    if (progress.gaveUp !== undefined) return this.giveUps.resume(m, port, progress.gaveUp, scope);

    let reply = progress.reply;
    let agentMessageId = progress.agentMessageId;
    let first = progress.posted;
    let recordedAt: number | undefined;
    let agentMs: number | undefined;
    let chunks: string[] | undefined;
    const earlierAttempt = progress.started > 0 || progress.reply !== undefined || progress.attempts > 0 || progress.limited > 0;
    const indicator = new WorkingIndicator(port, m.reply, this.options.workingIndicatorDelayMs ?? 0, scope, earlierAttempt);
    if (reply === undefined) {
      if (progress.started >= this.crashedCallsAllowed) {
        // Calls were made (maybe billed) and their answers died with the worker: no more of them.
        return this.giveUps.answerLost(m, port, scope, progress.started);
      }
      const agent = this.options.accounts ? await this.options.accounts.forWorkspace(m.platform, m.workspaceId) : this.options.agent;
      // Its account was removed after the message was queued: nobody to bill, so no call.
      if (!agent) return this.giveUps.noAccount(m, port, scope);
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
        return this.retryOrGiveUp.onError(m, port, progress, err, scope, indicator);
      }
      const fencedByRead = callFencedUntil !== undefined && performance.now() < callFencedUntil && !fence.abandoned?.();
      // The count this call makes (the read that marked it wrote the same).
      if (!fencedByRead && !(await scope.record({ started: progress.started + 1 }))) return (indicator.settle(), lostJob(scope.log()));
      const started = performance.now();
      try {
        ({ response: reply, messageId: agentMessageId } = await agent.chat(m.instanceId, prompt));
      } catch (err) {
        return this.retryOrGiveUp.onError(m, port, progress, err, scope, indicator);
      } finally {
        indicator.settle();
        agentMs = Math.round(performance.now() - started);
        if (this.options.logger.isLevelEnabled('debug')) scope.log().debug({ ms: agentMs }, 'agent call finished');
      }
      first = 0;
      reply = this.redact(reply);
      chunks = this.render(port, reply, scope);
      const answer: ProgressFields = { reply, posting: 0 };
      if (agentMessageId) answer.agentMessageId = agentMessageId;
      // A reply of several chunks is stored as rendered: whoever resumes it half posted (after a
      // crash, or a release that splits replies elsewhere) posts the rest of these chunks, never
      // its own chunk i, which could repeat or skip what chunk i-1 said.
      if (chunks.length > 1) answer.chunks = JSON.stringify(chunks);
      // The call is billed: keep trying to record its answer through a Redis blip. The same
      // write marks chunk 0 as under way, so posting it needs no other round trip.
      recordedAt = performance.now();
      // The answered mark lets the thread's later messages through without a mention; an
      // "Ask the agent" answer is about one message and does not make the bot a participant.
      const joinsThread = m.origin !== 'shortcut';
      if (!(await patiently(() => scope.record(answer, joinsThread), { refusedForMs: ANSWER_HOLD_MS, log: () => scope.log() }))) return lostJob(scope.log());
    }
    // Resumed: the chunks recorded with the answer (redacted as this worker redacts now), else
    // (a single chunk, or a record from a release that stored none) rendered here.
    chunks ??= (await this.options.mailbox.recordedChunks(m.conversationId, messageId))?.map((c) => this.redact(c)) ?? this.render(port, reply, scope);
    // The answer is recorded: posting it takes its turn behind the answers that came in first.
    const delivery: Delivery = { m, messageId, port, progress, scope, indicator, chunks, first, recordedAt, agentMessageId, agentMs };
    return this.gate.run(() => this.deliver(delivery));
  }

  /** The port's chunks of an answer (render-reply.ts). */
  private render(port: ReplyPort, reply: string, scope: MessageScope): string[] {
    return renderReply(port, reply, { maxChunks: this.options.maxReplyChunks ?? 10, redact: (t) => this.redact(t), log: () => scope.log() });
  }

  /** Posts a recorded answer's chunks from `first` on, each after its fenced record. */
  private async deliver({ m, messageId, port, progress, scope, indicator, chunks, first, recordedAt, agentMessageId, agentMs }: Delivery): Promise<StepResult> {
    // The answer's record also marked chunk `first` as under way and renewed the job's lock;
    // unless the wait for this turn outlasted half that lock, the post needs no other check.
    const postingRecorded = recordedAt !== undefined && scope.ownedUntilFrom(recordedAt) > performance.now();
    for (let i = first; i < chunks.length; i++) {
      // An earlier attempt started this post and never recorded the next step: it may be out.
      const mayExist = i === progress.posted && progress.posting === i;
      if (!(i === first && postingRecorded)) {
        // One fenced write: chunk i-1 is posted, chunk i is under way (and ownership holds).
        const owned = await patiently(() => scope.record({ posted: i, posting: i }), { log: () => scope.log() });
        if (!owned) return lostJob(scope.log());
      }
      // A signal shown while the agent worked lands before the reply it announces.
      if (i === first) await indicator.landed();
      try {
        await port.postChunk(m.reply, chunks[i]!, i, { messageId, total: chunks.length, mayExist, agentMessageId, instanceId: m.instanceId, redact: this.redactor });
      } catch (err) {
        return this.retryOrGiveUp.onError(m, port, progress, err, scope, indicator, true);
      }
    }
    // The last "posted" record is the worker's advance, which deletes the message record. The
    // signal comes down beside it: the next message need not wait for that platform call.
    void indicator.end('ok');
    this.options.metrics.messages.inc({ platform: m.platform, outcome: 'replied' });
    // The operator's one line per answer at info: who and how fast, never what was said.
    this.options.logger.info(
      { conversationId: m.conversationId, messageId, instanceId: m.instanceId, platform: m.platform, agentMs, chunks: chunks.length, ended: 'replied' },
      'message answered',
    );
    return { outcome: 'replied' };
  }
}
