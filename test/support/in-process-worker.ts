import { Redis } from 'ioredis';
import { afterEach } from 'vitest';
import { createAgentApi } from '../../src/agent-api/client.js';
import { FailureLog } from '../../src/diagnostics/failure-log.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import { startChatWorker, type ChatWorker } from '../../src/worker/chat-worker.js';
import { MessageProcessor } from '../../src/worker/process-message.js';
import type { ReplyPort } from '../../src/core/reply-port.js';
import type { Pipeline } from './pipeline.js';
import { sinkPort } from './sink.js';

/**
 * Chat workers in this process beside an ingress-only pipeline, wired as the app wires them
 * (one slot, a 1 s lock), so a test can stop one at an exact moment (its `close`, its
 * connection's `disconnect`). They are closed after each test.
 */
export function inProcessWorkers() {
  const started: Array<{ worker: ChatWorker; redis: Redis }> = [];
  afterEach(async () => {
    for (const { worker, redis } of started.splice(0)) {
      await worker.close(1_000);
      redis.disconnect();
    }
  });
  return {
    /** `port`: the playground's port it posts through (the pipeline's sink by default). */
    startInProcessWorker(pl: Pipeline, port: ReplyPort = sinkPort(pl.sink.url)): { worker: ChatWorker; redis: Redis } {
      const redis = new Redis(pl.bridge.config.redis.url, { maxRetriesPerRequest: null });
      const logger = createLogger({ level: 'silent', registry: new SecretRegistry() });
      const processor = new MessageProcessor({
        agent: createAgentApi(pl.agent.agentConfig()),
        ports: { web: port },
        mailbox: pl.bridge.queue.mailbox,
        logger,
        metrics: pl.bridge.metrics,
        retry: { attempts: 3, baseDelayMs: 20 },
        failures: new FailureLog(pl.bridge.redis, `${pl.prefix}:chat`),
        threadContext: { maxMessages: 5, maxChars: 1000 },
      });
      const worker = startChatWorker({
        connection: redis,
        prefix: pl.prefix,
        queue: pl.bridge.queue.queue,
        chatQueue: pl.bridge.queue,
        mailbox: pl.bridge.queue.mailbox,
        processor,
        logger,
        concurrency: 1,
        lockDurationMs: 1_000,
        stalledIntervalMs: 500,
      });
      started.push({ worker, redis });
      return { worker, redis };
    },
  };
}
