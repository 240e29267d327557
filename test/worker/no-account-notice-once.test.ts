import { afterEach, describe, expect, it } from 'vitest';
import type { AgentAccounts } from '../../src/accounts/agent-accounts.js';
import type { NoticeInfo, ReplyPort } from '../../src/core/reply-port.js';
import type { ReplyTarget } from '../../src/core/message.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import type { Fence } from '../../src/queue/mailbox.js';
import { jobIdFor } from '../../src/queue/types.js';
import { FailureLog } from '../../src/diagnostics/failure-log.js';
import { MessageProcessor, type ReadyHead } from '../../src/worker/process-message.js';
import { startPipeline, webMessage, type Pipeline } from '../support/pipeline.js';

/**
 * Per-workspace accounts, a workspace with none: the worker says so instead of calling. A worker
 * that dies right after that notice reached the platform, before the message was finished,
 * left nothing on record, so the worker that resumed the message said it again. Now the notice
 * is recorded (fenced) before it is said, as a give-up is, and the resumed message asks the
 * port to look for it first. The port here keeps its posts and finds one by the bridge message
 * it is about, as the Slack (metadata) and Discord (content) ports do.
 */
let p: Pipeline | undefined;
afterEach(async () => {
  await p?.close();
  p = undefined;
});

describe('a worker killed right after it said "no agent account"', () => {
  it('the next worker does not say it again, and no agent is called', async () => {
    p = await startPipeline({ ROLE: 'ingress' });
    const pl = p;
    const mailbox = pl.bridge.queue.mailbox;
    const notices: Array<{ target: ReplyTarget; text: string; info?: NoticeInfo }> = [];
    /** The first notice reaches the platform, and its worker dies before the post returns. */
    let dieOnNotice = true;
    const port: ReplyPort = {
      platform: 'web',
      render: (markdown) => [markdown],
      postChunk: async () => {},
      postNotice: async (target, text, info) => {
        if (info?.mayExist && notices.some((n) => n.info?.messageId === info.messageId)) return;
        notices.push({ target, text, info });
        if (dieOnNotice) {
          dieOnNotice = false;
          await new Promise(() => {});
        }
      },
    };
    let lookedUp = 0;
    const accounts = {
      mode: 'per-workspace',
      forWorkspace: async () => (lookedUp++, undefined),
    } as unknown as AgentAccounts;
    const processor = new MessageProcessor({
      agent: undefined as never,
      accounts,
      ports: { web: port },
      mailbox,
      logger: createLogger({ level: 'silent', registry: new SecretRegistry() }),
      metrics: pl.bridge.metrics,
      retry: { attempts: 3, baseDelayMs: 20 },
      failures: new FailureLog(pl.bridge.redis, `${pl.prefix}:chat`),
      threadContext: { maxMessages: 5, maxChars: 1000 },
    });
    const lockFor = async (jobId: string, token: string): Promise<Fence> => {
      await pl.bridge.redis.set(mailbox.keys.jobLock(jobId), token, 'PX', 60_000);
      return { jobId, token, lockDurationMs: 60_000 };
    };
    const head = async (conversationId: string, fence: Fence): Promise<ReadyHead> => {
      const r = await mailbox.acquire(conversationId, fence, { startCall: processor.startsCallOnRead });
      if (r.status !== 'ok' || !r.head?.message) throw new Error(`no head: ${r.status}`);
      return { ...r.head, message: r.head.message };
    };

    const m = webMessage('hello without an account', { channelId: 'c1' });
    await pl.bridge.ingress.handle(m);
    const jobId = jobIdFor('web', m.messageId);
    const a = await lockFor(jobId, 'worker-a');
    void processor.process(await head('web:local:c1', a), a);
    await until(() => notices.length === 1);

    // Worker A is gone mid-post; its lock lapses and BullMQ gives the job to worker B.
    const b = await lockFor(jobId, 'worker-b');
    expect(await processor.process(await head('web:local:c1', b), b)).toEqual({ outcome: 'gave_up' });

    expect(notices).toHaveLength(1);
    expect(notices[0]!.text).toMatch(/account/i);
    // Worker B did not even look for an account again: the message was settled.
    expect(lookedUp).toBe(1);
    expect(pl.agent.chatCalls()).toHaveLength(0);
  }, 30_000);
});

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
