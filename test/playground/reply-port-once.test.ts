import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createWebEventStore } from '../../adapters/web/event-store.js';
import { createWebReplyPort } from '../../adapters/web/reply-port.js';
import { PlatformError } from '../../src/core/errors.js';
import type { ReplyTarget } from '../../src/core/message.js';
import type { ChunkInfo } from '../../src/core/reply-port.js';
import { webReplyPortFixture } from './reply-port-fixture.js';

/** The playground's reply port appends a chunk once, even when an earlier attempt already did. */
describe('web reply port: no chunk appended twice', () => {
  const web = webReplyPortFixture('pgonce');
  const { config, logger, prefix } = web;

  const target = (channelId: string, messageId = randomUUID()): ReplyTarget => ({ channelId, messageId });
  const info = (t: ReplyTarget, mayExist: boolean): ChunkInfo => ({ messageId: t.messageId, total: 2, mayExist });
  const replies = async (channelId: string) =>
    (await web.store.history(channelId, { count: 100 })).flatMap((e) => (e.type === 'reply' ? [`${e.replyTo}#${e.index}`] : []));

  it('with mayExist and the chunk already in the stream: does not append it again', async () => {
    const t = target('once1');
    await web.port.postChunk(t, 'a', 0, info(t, false));
    await web.port.postChunk(t, 'b', 1, info(t, false));
    await web.port.postChunk(t, 'b', 1, info(t, true));
    expect(await replies('once1')).toEqual([`${t.messageId}#0`, `${t.messageId}#1`]);
  });

  it('with mayExist and the chunk not there: appends it once; another message’s chunk does not count', async () => {
    const t = target('once2');
    const other = target('once2');
    await web.port.postChunk(other, 'other', 1, info(other, false));
    await web.port.postChunk(t, 'a', 0, info(t, false));
    await web.port.postChunk(t, 'b', 1, info(t, true));
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
