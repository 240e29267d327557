import { randomUUID } from 'node:crypto';
import { loadTestConfig } from '../support/config.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createWebEventStore, type WebEventStore } from '../../adapters/web/event-store.js';
import { createWebReplyPort } from '../../adapters/web/reply-port.js';
import type { ReplyTarget } from '../../src/core/message.js';
import type { ReplyPort } from '../../src/core/reply-port.js';
import { createLogger } from '../../src/logger.js';
import { LogCapture } from '../support/pipeline.js';
import { deleteKeys } from '../support/redis-cleanup.js';

/** The playground's reply port appends a resumed give-up notice once, as it does a chunk. */
describe('web reply port: no give-up notice appended twice', () => {
  const prefix = `pgnotice-${randomUUID().slice(0, 8)}`;
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

  const target = (channelId: string): ReplyTarget => ({ channelId, messageId: randomUUID() });
  const notices = async (channelId: string) => (await store.history(channelId, { count: 100 })).flatMap((e) => (e.type === 'notice' ? [`${e.replyTo}:${e.text}`] : []));

  it('with mayExist and the notice already in the stream: not appended again', async () => {
    const t = target('n1');
    await port.postNotice(t, 'gave up (ref ABCDEF)', { messageId: t.messageId, mayExist: false });
    await port.postNotice(t, 'gave up (ref ABCDEF)', { messageId: t.messageId, mayExist: true });
    expect(await notices('n1')).toEqual([`${t.messageId}:gave up (ref ABCDEF)`]);
  });

  it('with mayExist and no such notice (another message’s does not count): appended once', async () => {
    const t = target('n2');
    const other = target('n2');
    await port.postNotice(other, 'gave up (ref ABCDEF)', { messageId: other.messageId, mayExist: false });
    await port.postNotice(t, 'gave up (ref ABCDEF)', { messageId: t.messageId, mayExist: true });
    expect(await notices('n2')).toEqual([`${other.messageId}:gave up (ref ABCDEF)`, `${t.messageId}:gave up (ref ABCDEF)`]);
  });
});
