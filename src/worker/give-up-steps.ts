import { explainFailure } from '../agent-api/problem-words.js';
import type { Platform } from '../core/conversation.js';
import { BridgeError } from '../core/errors.js';
import type { ReplyPort } from '../core/reply-port.js';
import type { PlatformVocabulary } from '../core/platform-context.js';
import { clipAtWord } from '../core/scrub.js';
import type { DropLogWriter } from '../diagnostics/drop-log.js';
import type { FailureLog } from '../diagnostics/failure-log.js';
import { noticesByPlatform } from '../ingress/notices.js';
import { errorFields, type Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { ChatMessage, GaveUp } from '../queue/types.js';
import { giveUpReason } from './error-policy.js';
import { patiently, type MessageScope } from './message-scope.js';
import { answerLostNotice, newReference } from './plain-words.js';
import { lostJob, type StepResult } from './step-result.js';
import type { WorkingIndicator } from './working-indicator.js';

/** What the give-up steps need of the MessageProcessor's options (process-message.ts). */
export interface GiveUpOptions {
  logger: Logger;
  metrics: Metrics;
  failures: FailureLog;
  drops?: DropLogWriter;
  callGuarantee?: 'at-least-once' | 'at-most-once';
  vocabularies?: Partial<Record<Platform, PlatformVocabulary>>;
}

/**
 * The ways a message ends without an answer: the user is told in a notice that is first recorded
 * in one fenced step (`gaveUp` in the message's progress), so that a worker resuming the message
 * after a crash says it again (`resume`) instead of calling the agent.
 */
export class GiveUpSteps {
  private readonly noticesOf: ReturnType<typeof noticesByPlatform>;

  constructor(
    private readonly options: GiveUpOptions,
    /** Replaces the process's secrets in what is stored or said (MessageProcessorOptions.redact). */
    private readonly redact: (text: string) => string,
  ) {
    this.noticesOf = noticesByPlatform(options.vocabularies);
  }

  /**
   * The worker died during the call as often as the guarantee allows (`crashes` times: once
   * under at-most-once, twice under at-least-once); tell the user, record it as a failure.
   */
  async answerLost(m: ChatMessage, port: ReplyPort, scope: MessageScope, crashes: number): Promise<StepResult> {
    const ref = newReference();
    const notice = `${answerLostNotice} (ref ${ref})`;
    // Fenced, and what a worker resuming after a crash from here on says again (resume).
    if (!(await scope.record({ gaveUp: JSON.stringify({ ref, notice } satisfies GaveUp) }))) return lostJob(scope.log());
    const guarantee = this.options.callGuarantee ?? 'at-least-once';
    this.options.logger.warn(
      { ref, platform: m.platform, conversationId: m.conversationId, messageId: m.messageId, instanceId: m.instanceId, crashes, guarantee, ended: 'gave_up', reason: 'answer_lost' },
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
  async noAccount(m: ChatMessage, port: ReplyPort, scope: MessageScope): Promise<StepResult> {
    const notice = this.noticesOf(m.platform).noAccount;
    // Fenced, before it is said, as a give-up is: a worker that resumes the message after a crash
    // looks for this notice (resume) instead of saying it a second time.
    if (!(await scope.record({ gaveUp: JSON.stringify({ ref: newReference(), notice } satisfies GaveUp) }))) return lostJob(scope.log());
    this.options.logger.warn(
      { platform: m.platform, conversationId: m.conversationId, messageId: m.messageId, workspaceId: m.workspaceId, ended: 'gave_up', reason: 'no_account' },
      'no agent account for this workspace; message not sent',
    );
    await port
      .postNotice(m.reply, notice, { messageId: scope.messageId, mayExist: false })
      .catch((e) => this.options.logger.warn({ ...errorFields(e) }, 'could not post a notice'));
    this.options.metrics.messages.inc({ platform: m.platform, outcome: 'gave_up' });
    return { outcome: 'gave_up' };
  }

  /** An error the policy (or the call guarantee) will not retry: on file first, then told (per the binding's error policy). */
  async giveUp(m: ChatMessage, port: ReplyPort | undefined, err: unknown, indicator?: WorkingIndicator, scope?: MessageScope): Promise<StepResult> {
    const ref = newReference();
    const notice = port && m.errorPolicy === 'reply' ? this.redact(`${explainFailure(err)} (ref ${ref})`) : undefined;
    // Fenced, before anything is said: a worker that resumes the message after a crash from here
    // on says this again (resume) and never calls the agent for it a second time.
    if (scope && !(await patiently(() => scope.record({ gaveUp: JSON.stringify({ ref, notice } satisfies GaveUp) })))) return lostJob(scope.log());
    this.options.logger.warn(
      { ref, platform: m.platform, conversationId: m.conversationId, messageId: m.messageId, instanceId: m.instanceId, ended: 'gave_up', reason: giveUpReason(err), ...errorFields(err) },
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
   * A worker recorded that it gave up on the message (giveUp, answerLost, noAccount) and stopped
   * before finishing it: the user is told, with the same reference, unless the port finds the
   * notice the first worker posted; the agent is never called. Already in the failure log.
   */
  async resume(m: ChatMessage, port: ReplyPort, mark: string, scope: MessageScope): Promise<StepResult> {
    const { ref, notice, withdrawn, why } = JSON.parse(mark) as GaveUp;
    if (!(await scope.record({}))) return lostJob(scope.log());
    if (withdrawn) {
      // Its sender took the question back (ChatQueue.withdraw, edit-message.ts): nobody waits.
      const reason = why ?? 'edited before it was answered (it no longer asks the bot, was left empty, or is too long)';
      scope.log().info({ ref, platform: m.platform, ended: 'withdrawn', reason }, `the message was ${reason}: not calling the agent`);
      this.options.metrics.messages.inc({ platform: m.platform, outcome: 'withdrawn' });
      return { outcome: 'withdrawn' };
    }
    scope.log().warn({ ref, platform: m.platform, ended: 'gave_up', reason: 'resumed' }, 'resuming a message given up on before a restart: telling the user unless they were told, not calling the agent');
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
