import { afterEach, describe, expect, it } from 'vitest';
import { createAgentApi } from '../../src/agent-api/client.js';
import type { ReplyPort } from '../../src/core/reply-port.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import type { Fence } from '../../src/queue/mailbox.js';
import { jobIdFor } from '../../src/queue/types.js';
import { FailureLog } from '../../src/diagnostics/failure-log.js';
import { MessageProcessor, type ReadyHead } from '../../src/worker/process-message.js';
import { startPipeline, webMessage, type Pipeline } from '../support/pipeline.js';
import { sinkPort } from '../support/sink.js';

/**
 * A worker that dies while it posts a give-up notice (the agent refused the message): the
 * worker that resumes the message says the same notice again and never calls the agent a second
 * time. Driven by hand against the real Redis, agent emulator and sink; the first worker's
 * "death" is its notice post never returning, the takeover a forged BullMQ lock.
 */
let p: Pipeline | undefined;
afterEach(async () => {
  await p?.close();
  p = undefined;
});

async function setup(callGuarantee: 'at-least-once' | 'at-most-once') {
  p = await startPipeline({ ROLE: 'ingress' });
  const pl = p;
  const mailbox = pl.bridge.queue.mailbox;
  const sink = sinkPort(pl.sink.url, 2000);
  /** The first notice reaches the sink, and its worker dies before the post returns. */
  let dieOnNotice = true;
  const port: ReplyPort = {
    ...sink,
    postNotice: async (target, text) => {
      await sink.postNotice(target, text);
      if (dieOnNotice) {
        dieOnNotice = false;
        await new Promise(() => {});
      }
    },
  };
  const processor = new MessageProcessor({
    agent: createAgentApi(pl.agent.agentConfig()),
    ports: { web: port },
    mailbox,
    logger: createLogger({ level: 'silent', registry: new SecretRegistry() }),
    metrics: pl.bridge.metrics,
    retry: { attempts: 3, baseDelayMs: 20 },
    failures: new FailureLog(pl.bridge.redis, `${pl.prefix}:chat`),
    threadContext: { maxMessages: 5, maxChars: 1000 },
    callGuarantee,
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
  return { pl, processor, lockFor, head };
}

describe('a worker killed while it posts a give-up notice', () => {
  for (const guarantee of ['at-least-once', 'at-most-once'] as const) {
    it(`${guarantee}: the next worker says the same notice again and never calls the agent again`, async () => {
      const t = await setup(guarantee);
      const m = webMessage(`refused (${guarantee})`, { channelId: 'c1' });
      await t.pl.bridge.ingress.handle(m);
      const jobId = jobIdFor('web', m.messageId);
      const conversation = 'web:local:c1';
      t.pl.agent.failNext(1, { status: 422, body: { error: 'nope' } }, { endpoint: 'chat' });

      const a = await t.lockFor(jobId, 'worker-a');
      void t.processor.process(await t.head(conversation, a), a);
      await t.pl.sink.waitFor((posts) => posts.some((x) => x.kind === 'notice'), 10_000);

      // Worker A is gone mid-post; its lock lapses and BullMQ gives the job to worker B.
      const b = await t.lockFor(jobId, 'worker-b');
      const resumed = await t.head(conversation, b);
      expect(await t.processor.process(resumed, b)).toEqual({ outcome: 'gave_up' });

      expect(t.pl.agent.chatCalls()).toHaveLength(1);
      const notices = t.pl.sink.posts.filter((x) => x.messageId === m.messageId);
      expect(notices.map((x) => x.kind)).toEqual(['notice', 'notice']);
      expect(notices[0]!.text).toMatch(/\(ref [A-Z2-9]{6}\)$/);
      expect(notices[1]!.text).toBe(notices[0]!.text);
    }, 30_000);
  }
});
