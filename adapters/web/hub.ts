import type { Redis } from 'ioredis';
import { errorFields } from '../../src/logger.js';
import type { Logger } from '../../src/logger.js';
import { toStoredEvent, type StoredWebEvent } from './events.js';
import { isRedisConnectionError } from '../../src/redis-errors.js';

export type WebEventListener = (event: StoredWebEvent) => void;

/** Options of {@link createWebEventHub}. */
export interface WebEventHubOptions {
  /** The connection to duplicate; a subscribed connection can run no other command. */
  redis: Redis;
  /** Pub/sub channel the event store announces on. */
  channel: string;
  logger: Pick<Logger, 'warn' | 'debug'>;
}

/**
 * Fans announced web events out to the page's SSE clients in this process. Events come from
 * Redis whichever process wrote them (a worker's reply port, or this ingress).
 */
export interface WebEventHub {
  start(): Promise<void>;
  /** Idempotent. */
  stop(): Promise<void>;
  /** Listens to one web channel; returns the function that stops listening. */
  listen(channelId: string, listener: WebEventListener): () => void;
}

export function createWebEventHub(options: WebEventHubOptions): WebEventHub {
  const { logger } = options;
  const listeners = new Map<string, Set<WebEventListener>>();
  let subscriber: Redis | undefined;
  let stopped: Promise<void> | undefined;

  const dispatch = (payload: string) => {
    let stored: StoredWebEvent | undefined;
    try {
      const { id, e } = JSON.parse(payload) as { id?: unknown; e?: unknown };
      stored = toStoredEvent(id, e);
    } catch {
      // Not JSON: reported below.
    }
    if (!stored) {
      logger.warn('ignored a malformed web event announcement');
      return;
    }
    for (const listener of listeners.get(stored.channelId) ?? []) {
      try {
        listener(stored);
      } catch (err) {
        logger.warn({ ...errorFields(err) }, 'a web event listener failed');
      }
    }
  };

  return {
    async start() {
      if (subscriber || stopped) return;
      subscriber = options.redis.duplicate({ connectionName: 'agent-bridge:web-events' });
      // Outages are logged once, as lost and back, by the composition root.
      subscriber.on('error', (err: Error) =>
        isRedisConnectionError(err)
          ? logger.debug({ ...errorFields(err) }, 'web event subscription: Redis connection error')
          : logger.warn({ ...errorFields(err) }, 'web event subscription: Redis error'),
      );
      subscriber.on('message', (channel: string, payload: string) => {
        if (channel === options.channel) dispatch(payload);
      });
      await subscriber.subscribe(options.channel);
      logger.debug({ channel: options.channel }, 'web events subscribed');
    },
    stop() {
      stopped ??= (async () => {
        listeners.clear();
        const s = subscriber;
        subscriber = undefined;
        if (!s) return;
        try {
          await s.quit();
        } catch {
          s.disconnect();
        }
      })();
      return stopped;
    },
    listen(channelId, listener) {
      let set = listeners.get(channelId);
      if (!set) listeners.set(channelId, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0 && listeners.get(channelId) === set) listeners.delete(channelId);
      };
    },
  };
}
