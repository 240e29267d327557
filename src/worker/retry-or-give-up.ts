import type { AgentAccounts } from '../accounts/agent-accounts.js';
import { BridgeError, CALL_MAY_HAVE_RUN, type ErrorKind } from '../core/errors.js';
import type { ReplyPort } from '../core/reply-port.js';
import { errorFields, type Logger } from '../logger.js';
import type { MailboxHead, ProgressFields } from '../queue/mailbox.js';
import type { ChatMessage } from '../queue/types.js';
import { decide, postingPatiently, type RetryPolicy } from './error-policy.js';
import type { GiveUpSteps } from './give-up-steps.js';
import type { MessageScope } from './message-scope.js';
import { lostJob, type StepResult } from './step-result.js';
import type { WorkingIndicator } from './working-indicator.js';

/** Platform error kinds that mean the platform answered and stored nothing. */
const REFUSED_POST: ReadonlySet<ErrorKind> = new Set(['rate_limited', 'refused', 'bad_request', 'unauthorized', 'forbidden', 'not_found']);

/** `posting` when no post is under way (an earlier one was refused). */
const NOTHING_UNDER_WAY = -1;

/** What the error step needs of the MessageProcessor's options (process-message.ts). */
export interface RetryOrGiveUpOptions {
  logger: Logger;
  retry: RetryPolicy;
  /** Set when each workspace has its own agent account. */
  accounts?: AgentAccounts;
  callGuarantee?: 'at-least-once' | 'at-most-once';
}

/**
 * A step of a message failed (the thread read, the agent call, a post): the error policy
 * (error-policy.ts) and the call guarantee decide between a retry, recorded here in one fenced
 * write, and giving up (give-up-steps.ts).
 */
export class RetryOrGiveUp {
  constructor(
    private readonly options: RetryOrGiveUpOptions,
    private readonly giveUps: GiveUpSteps,
  ) {}

  async onError(
    m: ChatMessage,
    port: ReplyPort,
    progress: MailboxHead['progress'],
    err: unknown,
    scope: MessageScope,
    indicator: WorkingIndicator,
    posting = false,
  ): Promise<StepResult> {
    let decision = decide(err, progress.attempts, this.options.retry, postingPatiently(err, posting, m.receivedAt) ? 0 : progress.limited);
    if (decision.action === 'give-up') return this.giveUps.giveUp(m, port, err, indicator, scope);
    // Per-workspace accounts: a 429 limits this workspace's account, not the others'; only its
    // message waits (the next of that account that hits the limit waits too).
    if (decision.action === 'rate-limit' && this.options.accounts) decision = { action: 'retry', delayMs: decision.delayMs, counts: false };
    if (this.options.callGuarantee === 'at-most-once' && err instanceof BridgeError && err.code === CALL_MAY_HAVE_RUN) {
      // Sent, and no answer came back: the service may have run (and billed) it. Never call twice.
      this.options.logger.info({ conversationId: m.conversationId, messageId: m.messageId, ...errorFields(err) }, 'not retrying a call the agent service may have run (at-most-once)');
      return this.giveUps.giveUp(m, port, err, indicator, scope);
    }
    const counted = decision.action === 'retry' && decision.counts;
    // The failed call is over, so the retry calls again whatever the guarantee: its own "started"
    // mark is taken back, and only the calls the worker died during before it stay counted.
    const started = progress.started || '';
    const fields: ProgressFields = counted ? { attempts: progress.attempts + 1, started } : { limited: progress.limited + 1, started };
    // The platform answered "no" to the post (a 429, a refusal): it stored nothing, so the retry
    // posts without first reading the thread back for it.
    if (err instanceof BridgeError && err.source !== 'agent' && REFUSED_POST.has(err.kind)) fields.posting = NOTHING_UNDER_WAY;
    if (!(await scope.record(fields))) return lostJob(this.options.logger);
    this.options.logger.info(
      { conversationId: m.conversationId, messageId: m.messageId, ...errorFields(err), decision },
      'will retry the message',
    );
    return { outcome: 'retry', decision };
  }
}
