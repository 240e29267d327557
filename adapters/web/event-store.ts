import type { Redis } from 'ioredis';
import type { Logger } from '../../src/logger.js';
import { parseStoredEvent, type StoredWebEvent, type WebEvent } from './events.js';
import { webKeys, type WebKeys } from './channels.js';

/** Options of {@link createWebEventStore}. */
export interface WebEventStoreOptions {
  redis: Redis;
  /** `config.queue.prefix`; keys live under `${prefix}:web:`. */
  prefix: string;
  logger?: Pick<Logger, 'warn'>;
  /** @defaultValue 500 events per channel (approximate trim) */
  maxEvents?: number;
  /** @defaultValue 7 days since the channel's last event */
  ttlSeconds?: number;
}

/** The web channels' history in Redis, shared by the reply port (workers) and the page (ingress). */
export interface WebEventStore {
  readonly keys: WebKeys;
  /** Appends the event to the channel's stream and announces it on pub/sub; resolves with its ID. */
  append(event: WebEvent): Promise<string>;
  /** The last `count` events, oldest first, or those after `afterId` (at most `count`). */
  history(channelId: string, options: { count: number; afterId?: string }): Promise<StoredWebEvent[]>;
}

// One round trip, atomic: the stream entry and its announcement never part ways.
const APPEND = `
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'e', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('PUBLISH', ARGV[4], '{"id":"' .. id .. '","e":' .. ARGV[2] .. '}')
return id`;

export function createWebEventStore(options: WebEventStoreOptions): WebEventStore {
  const { redis, logger } = options;
  const keys = webKeys(options.prefix);
  const maxEvents = options.maxEvents ?? 500;
  const ttl = options.ttlSeconds ?? 7 * 86_400;

  const parseEntries = (entries: Array<[string, string[]]>): StoredWebEvent[] => {
    const out: StoredWebEvent[] = [];
    for (const [id, fields] of entries) {
      const json = fields[fields.indexOf('e') + 1];
      const event = json === undefined ? undefined : parseStoredEvent(id, json);
      if (event) out.push(event);
      else logger?.warn({ id }, 'skipped a corrupt web channel event');
    }
    return out;
  };

  return {
    keys,
    async append(event) {
      const id = await redis.eval(APPEND, 1, keys.stream(event.channelId), maxEvents, JSON.stringify(event), ttl, keys.events);
      return String(id);
    },
    async history(channelId, { count, afterId }) {
      const key = keys.stream(channelId);
      if (afterId) return parseEntries(await redis.xrange(key, `(${afterId}`, '+', 'COUNT', count));
      return parseEntries(await redis.xrevrange(key, '+', '-', 'COUNT', count)).reverse();
    },
  };
}
