import { afterEach, describe, expect, it } from 'vitest';
import { createAgentApi } from '../../src/agent-api/client.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import type { Fence } from '../../src/queue/mailbox.js';
import { jobIdFor } from '../../src/queue/types.js';
import { FailureLog } from '../../src/diagnostics/failure-log.js';
import { MessageProcessor } from '../../src/worker/process-message.js';
import { startPipeline, webMessage, type Pipeline } from '../support/pipeline.js';
import { sinkPort } from '../support/sink.js';
import { LogCapture } from '../support/log-capture.js';

/**
 * Redis restarted without persistence during an agent call: the message's record and its seen
 * mark are gone. The answer in hand (billed) is posted, and the loss is logged as an error;
 * it is not dropped as if another worker had finished the message.
 */
let p: Pipeline | undefined;
afterEach(async () => {
  await p?.close();
  p = undefined;
});

describe('Redis loses its data during the agent call', () => {
  it('the answer in hand is posted once and the loss logged as an error', async () => {
    p = await startPipeline({ ROLE: 'ingress' });
    const pl = p;
    const mailbox = pl.bridge.queue.mailbox;
    const capture = new LogCapture();
    const processor = new MessageProcessor({
      agent: createAgentApi(pl.agent.agentConfig()),
      ports: { web: sinkPort(pl.sink.url, 2000) },
      mailbox,
      logger: createLogger({ level: 'info', registry: new SecretRegistry(), destination: capture }),
      metrics: pl.bridge.metrics,
      retry: { attempts: 3, baseDelayMs: 20 },
      failures: new FailureLog(pl.bridge.redis, `${pl.prefix}:chat`),
      threadContext: { maxMessages: 5, maxChars: 1000 },
    });
    const m = webMessage('asked before the wipe', { channelId: 'c1' });
    await pl.bridge.ingress.handle(m);
    const jobId = jobIdFor('web', m.messageId);
    await pl.bridge.redis.set(mailbox.keys.jobLock(jobId), 'w', 'PX', 60_000);
    const fence: Fence = { jobId, token: 'w', lockDurationMs: 60_000 };
    const read = await mailbox.acquire('web:local:c1', fence);
    if (read.status !== 'ok' || !read.head?.message) throw new Error(`no head: ${read.status}`);

    pl.agent.hangNext(1, { endpoint: 'chat' });
    const running = processor.process({ ...read.head, message: read.head.message }, fence);
    await pl.agent.waitForCalls(1, (c) => c.endpoint === 'chat');
    // Redis comes back empty: every key of this bridge is gone.
    const keys = await pl.bridge.redis.keys(`${pl.prefix}*`);
    if (keys.length) await pl.bridge.redis.del(...keys);
    pl.agent.releaseHanging();

    expect(await running).toEqual({ outcome: 'replied' });
    expect(pl.sink.posts.filter((x) => x.messageId === m.messageId).map((x) => x.kind)).toEqual(['chunk']);
    expect(pl.agent.chatCalls()).toHaveLength(1);
    const errors = capture.matching(/./).filter((l) => l.level === 50);
    expect(errors.map((l) => l.msg)).toEqual(['the message is gone from Redis (restarted without persistence?); going on without recording its progress']);
  });
});
