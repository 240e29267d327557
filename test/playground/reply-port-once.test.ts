import { randomUUID } from 'node:crypto';
import { loadTestConfig } from '../support/config.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createWebEventStore, type WebEventStore } from '../../adapters/web/event-store.js';
import { createWebReplyPort } from '../../adapters/web/reply-port.js';

import { PlatformError } from '../../src/core/errors.js';
import type { ReplyTarget } from '../../src/core/message.js';
import type { ChunkInfo, ReplyPort } from '../../src/core/reply-port.js';
import { createLogger } from '../../src/logger.js';
import { LogCapture } from '../support/pipeline.js';
import { deleteKeys } from '../support/redis-cleanup.js';

/** The playground's reply port appends a chunk once, even when an earlier attempt already did. */
describe('web reply port: no chunk appended twice', () => {
  const prefix = `pgonce-${randomUUID().slice(0, 8)}`;
  let redis: Redis;
  let store: WebEventStore;
  let port: ReplyPort;
  const config = loadTestConfig({ AGENT_API_BASE_URL: 'http://127.0.0.1:1/api/v1', AGENT_API_KEY: 'k', QUEUE_PREFIX: prefix, ROLE: 'worker', PLAYGROUND: 'true' });
  const logger = createLogger({ level: 'warn', destination: new LogCapture() });

  beforeAll(() => {
    redis = new Redis('redis://127.0.0.1:6379');
    store = createWebEventStore({ redis, prefix: config.queue.prefix });
    port = createWebReplyPort({ config, logger, redis }, store);
  });
  afterAll(async () => {
    redis.disconnect();
    await deleteKeys(prefix);
  });

  const target = (channelId: string, messageId = randomUUID()): ReplyTarget => ({ channelId, messageId });
  const info = (t: ReplyTarget, mayExist: boolean): ChunkInfo => ({ messageId: t.messageId, total: 2, mayExist });
  const replies = async (channelId: string) =>
    (await store.history(channelId, { count: 100 })).flatMap((e) => (e.type === 'reply' ? [`${e.replyTo}#${e.index}`] : []));

  it('with mayExist and the chunk already in the stream: does not append it again', async () => {
    const t = target('once1');
    await port.postChunk(t, 'a', 0, info(t, false));
    await port.postChunk(t, 'b', 1, info(t, false));
    await port.postChunk(t, 'b', 1, info(t, true));
    expect(await replies('once1')).toEqual([`${t.messageId}#0`, `${t.messageId}#1`]);
  });

  it('with mayExist and the chunk not there: appends it once; another message’s chunk does not count', async () => {
    const t = target('once2');
    const other = target('once2');
    await port.postChunk(other, 'other', 1, info(other, false));
    await port.postChunk(t, 'a', 0, info(t, false));
    await port.postChunk(t, 'b', 1, info(t, true));
    expect(await replies('once2')).toEqual([`${other.messageId}#1`, `${t.messageId}#0`, `${t.messageId}#1`]);
  });

  it('when the stream cannot be read, the lookup fails retryably and nothing is appended', async () => {
    const dead = new Redis({ port: 1, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    try {
      const t = target('once3');
      const offline = createWebReplyPort({ config, logger, redis: dead }, createWebEventStore({ redis: dead, prefix }));
      const err = (await offline.postChunk(t, 'a', 0, info(t, true)).catch((e: unknown) => e)) as PlatformError;
      expect(err).toBeInstanceOf(PlatformError);
      expect(err).toMatchObject({ source: 'web', kind: 'network' });
      expect(err.retryable).toBe(true);
      expect(await replies('once3')).toEqual([]);
    } finally {
      dead.disconnect();
    }
  });
});
