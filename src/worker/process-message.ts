import type { AgentApi } from '../agent-api/types.js';
import type { ReplyPort, ReplyPorts } from '../core/reply-port.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { Mailbox, MailboxHead } from '../queue/mailbox.js';
import type { ChatMessage } from '../queue/types.js';
import { decide, type Decision, type RetryPolicy } from './error-policy.js';
import { explainFailure, newReference } from './plain-words.js';
import { buildThreadPrompt } from './thread-context.js';
import type { FailureLog } from './failure-log.js';
import { BridgeError } from '../core/errors.js';
import { isRedisConnectionError } from '../redis-errors.js';

/** Records dropped/failed messages for `/agent why` (src/diagnostics). */
export interface DropRecorder {
  record(
    platform: ChatMessage['platform'],
    channelId: string,
    entry: { messageId: string; userId: string; reason: 'agent_refused'; at: number; ref?: string },
  ): Promise<void>;
}

export interface MessageProcessorOptions {
  agent: AgentApi;
  ports: ReplyPorts;
  mailbox: Mailbox;
  logger: Logger;
  metrics: Metrics;
  retry: RetryPolicy;
  failures: FailureLog;
  drops?: DropRecorder;
  threadContext: { maxMessages: number; maxChars: number };
}

export type StepResult =
  | { outcome: 'replied' | 'gave_up' }
  /** Another worker owns the job now (this one was paused past its lock): stop, post nothing. */
  | { outcome: 'lost' }
  | { outcome: 'retry'; decision: Exclude<Decision, { action: 'give-up' }> };

/** Whether this worker still holds the job's lock; checked before every visible step. */
export type OwnershipCheck = () => Promise<boolean>;

/**
 * Answers one message: agent call, then each reply chunk, recording progress after every
 * step so that a retry (or another worker after a crash) never repeats a finished step.
 * Redis errors propagate (the job is retried); agent and platform errors are decided here.
 */
export class MessageProcessor {
  constructor(private readonly o: MessageProcessorOptions) {}

  async process({ messageId, message: m, progress }: MailboxHead, stillOwned: OwnershipCheck = async () => true): Promise<StepResult> {
    const port = this.o.ports[m.platform];
    if (!port) {
      this.o.logger.error({ platform: m.platform, messageId }, 'no reply port for this platform in this process; check its settings');
      return this.giveUp(m, undefined, new Error(`no ${m.platform} reply port`));
    }
    const log = this.o.logger.child({ conversationId: m.conversationId, messageId, instanceId: m.instanceId });

    let reply = progress.reply;
    if (reply === undefined) {
      await port.startWorking?.(m.reply).catch((err) => log.debug({ err }, 'working indicator failed'));
      const prompt = await this.prompt(m, port, log);
      const started = performance.now();
      try {
        reply = (await this.o.agent.chat(m.instanceId, prompt)).response;
      } catch (err) {
        return this.onError(m, port, progress, err);
      } finally {
        log.debug({ ms: Math.round(performance.now() - started) }, 'agent call finished');
      }
      if (!(await stillOwned())) return this.lost(log);
      const answer = reply;
      // The call is billed: keep trying to record its answer through a Redis blip.
      await patiently(() => this.o.mailbox.recordReply(m.conversationId, messageId, answer));
    }

    const chunks = port.render(reply.trim() ? reply : '_(The agent sent an empty reply.)_');
    for (let i = progress.posted; i < chunks.length; i++) {
      if (!(await stillOwned())) return this.lost(log);
      // An earlier attempt started this post and never recorded it done: it may be out.
      const mayExist = i === progress.posted && progress.posting === i;
      // Recorded before the post, so a retry after a crash right after it knows to look first.
      await patiently(() => this.o.mailbox.record(m.conversationId, messageId, { posting: i }));
      try {
        await port.postChunk(m.reply, chunks[i]!, i, { messageId, total: chunks.length, mayExist });
      } catch (err) {
        return this.onError(m, port, progress, err);
      }
      // The chunk is out: only this record stops a retry from posting it again.
      await patiently(() => this.o.mailbox.record(m.conversationId, messageId, { posted: i + 1 }));
    }
    await port.stopWorking?.(m.reply, 'ok').catch((err) => log.debug({ err }, 'working indicator failed'));
    this.o.metrics.messages.inc({ platform: m.platform, outcome: 'replied' });
    return { outcome: 'replied' };
  }

  private lost(log: Logger): StepResult {
    log.warn('lost the job lock (this worker was paused or too slow); another worker answers instead');
    return { outcome: 'lost' };
  }

  private async onError(m: ChatMessage, port: ReplyPort, progress: MailboxHead['progress'], err: unknown): Promise<StepResult> {
    const decision = decide(err, progress.attempts, this.o.retry, progress.limited);
    if (decision.action === 'give-up') return this.giveUp(m, port, err);
    const counted = decision.action === 'retry' && decision.counts;
    await this.o.mailbox.record(
      m.conversationId,
      m.messageId,
      counted ? { attempts: progress.attempts + 1 } : { limited: progress.limited + 1 },
    );
    this.o.logger.info(
      { conversationId: m.conversationId, messageId: m.messageId, ...errorFields(err), decision },
      'will retry the message',
    );
    return { outcome: 'retry', decision };
  }

  private async giveUp(m: ChatMessage, port: ReplyPort | undefined, err: unknown): Promise<StepResult> {
    const ref = newReference();
    this.o.logger.warn(
      { ref, conversationId: m.conversationId, messageId: m.messageId, instanceId: m.instanceId, ...errorFields(err) },
      'gave up on a message',
    );
    const reason = err instanceof BridgeError ? `${err.source} ${err.kind}: ${err.message}` : 'internal error';
    await this.o.failures.record({
      ref,
      platform: m.platform,
      conversationId: m.conversationId,
      instanceId: m.instanceId,
      reason: reason.slice(0, 300),
      at: Date.now(),
    });
    await this.o.drops
      ?.record(m.platform, m.channelId, { messageId: m.messageId, userId: m.userId, reason: 'agent_refused', at: Date.now(), ref })
      .catch(() => {});
    // Recorded before the user is told, so whatever they see is already on file.
    if (port) {
      if (m.errorPolicy === 'reply') {
        await port
          .postNotice(m.reply, `${explainFailure(err)} (ref ${ref})`)
          .catch((e) => this.o.logger.warn({ ref, ...errorFields(e) }, 'could not tell the user about the failure'));
      }
      await port.stopWorking?.(m.reply, m.errorPolicy === 'silent' ? 'ok' : 'failed').catch(() => {});
    }
    this.o.metrics.messages.inc({ platform: m.platform, outcome: 'gave_up' });
    return { outcome: 'gave_up' };
  }

  private async prompt(m: ChatMessage, port: ReplyPort, log: Logger): Promise<string> {
    // Each port decides what "the thread" is (Slack/Discord threads; the playground's channel).
    if (m.context !== 'thread' || !port.fetchThread) return m.text;
    try {
      const earlier = await port.fetchThread(m.reply, this.o.threadContext.maxMessages);
      return buildThreadPrompt(earlier, m, this.o.threadContext.maxChars);
    } catch (err) {
      log.warn({ ...errorFields(err) }, 'could not fetch the thread; sending the message without context');
      return m.text;
    }
  }
}

/** Loggable, secret-free fields of an error. */
export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof BridgeError) {
    return { error: { source: err.source, kind: err.kind, status: err.status, code: err.code, message: err.message } };
  }
  return { error: { message: err instanceof Error ? err.message : String(err) } };
}

/**
 * Runs a Redis write that records an effect already done, retrying while Redis is unreachable
 * (up to `forMs`), instead of failing the job and repeating the effect.
 */
async function patiently(write: () => Promise<unknown>, forMs = 20_000): Promise<void> {
  const deadline = Date.now() + forMs;
  for (let attempt = 0; ; attempt++) {
    try {
      await write();
      return;
    } catch (err) {
      if (!isRedisConnectionError(err) || Date.now() >= deadline) throw err;
      await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** attempt, 1000)));
    }
  }
}
