import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { createWebEventStore, type WebEventStore } from '../../adapters/web/event-store.js';
import { createWebReplyPort } from '../../adapters/web/reply-port.js';
import type { Config } from '../../src/config/load.js';
import type { ReplyPort } from '../../src/core/reply-port.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { newPrefix } from '../support/bridge-harness.js';
import { loadTestConfig } from '../support/config.js';
import { LogCapture } from '../support/log-capture.js';
import { deleteKeys, SHARED_REDIS } from '../support/redis-cleanup.js';

/** The playground's reply port as a worker has it, and the event store it appends to. */
export interface WebReplyPortFixture {
  /** The file's key prefix (`<tag>-<8 hex digits>`). */
  readonly prefix: string;
  readonly config: Readonly<Config>;
  readonly logger: Logger;
  readonly store: WebEventStore;
  readonly port: ReplyPort;
}

/**
 * The playground's reply port alone (no bridge, no agent) on the shared Redis under a key
 * prefix of its own: `beforeAll` connects, `afterAll` disconnects and deletes the prefix's keys.
 * Call it inside the file's `describe`.
 */
export function webReplyPortFixture(tag: string): WebReplyPortFixture {
  const prefix = newPrefix(tag);
  // The agent is never called: the reply port only appends to the event store.
  const config = loadTestConfig({ AGENT_API_BASE_URL: 'http://127.0.0.1:1/api/v1', AGENT_API_KEY: 'k', QUEUE_PREFIX: prefix, ROLE: 'worker', PLAYGROUND: 'true' });
  const logger = createLogger({ level: 'warn', destination: new LogCapture() });
  let open: { redis: Redis; store: WebEventStore; port: ReplyPort } | undefined;

  beforeAll(() => {
    const redis = new Redis(SHARED_REDIS);
    const store = createWebEventStore({ redis, prefix: config.queue.prefix });
    open = { redis, store, port: createWebReplyPort({ config, logger, redis }, store) };
  });
  afterAll(async () => {
    open?.redis.disconnect();
    await deleteKeys(prefix);
  });

  const opened = () => {
    if (!open) throw new Error('the reply port fixture is not open (beforeAll failed?)');
    return open;
  };
  return {
    prefix,
    config,
    logger,
    get store() {
      return opened().store;
    },
    get port() {
      return opened().port;
    },
  };
}
