import { readFileSync } from 'node:fs';
import type { ConnectionOptions as TlsOptions } from 'node:tls';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { ConfigError } from './config/config-error.js';
import type { Config } from './config/load.js';

/**
 * A connection to one Redis server (directly or through Sentinel) or to a Redis Cluster.
 * Both speak the same commands; code that takes a connection should accept this type.
 */
export type RedisClient = Redis | Cluster;

/** Options of {@link createRedis}. */
export interface CreateRedisOptions {
  /**
   * For BullMQ workers and queue events: commands wait out a Redis outage instead of failing
   * (`maxRetriesPerRequest: null`, which BullMQ requires of blocking connections).
   * @defaultValue false
   */
  blocking?: boolean;
  /** Client name shown by `CLIENT LIST`. */
  name?: string;
}

/** How `config.redis` reaches Redis: `REDIS_CLUSTER_NODES`, `REDIS_SENTINELS`, or `REDIS_URL` alone. */
export type RedisMode = 'standalone' | 'sentinel' | 'cluster';

export function redisMode(config: Config['redis']): RedisMode {
  if (config.clusterNodes.length > 0) return 'cluster';
  if (config.sentinels.length > 0) return 'sentinel';
  return 'standalone';
}

/**
 * Opens a Redis connection from config.
 *
 * - `REDIS_URL` gives the scheme, credentials and database in every mode; `rediss://` turns
 *   on TLS (verified against the system CAs, or `REDIS_TLS_CA_FILE` when set).
 * - `REDIS_SENTINELS` (+ `REDIS_SENTINEL_NAME`): the master is looked up through Sentinel and
 *   `REDIS_URL`'s host is not used. With `rediss://`, Sentinels and master both speak TLS.
 * - `REDIS_CLUSTER_NODES`: returns an ioredis `Cluster` seeded with those nodes. BullMQ then
 *   needs the hash-tagged prefix from {@link bullPrefix}.
 *
 * Plain connections keep a small retry limit so a call fails (and the caller can answer)
 * instead of waiting forever while Redis is down.
 */
export function createRedis(config: Config['redis'], options: CreateRedisOptions = {}): RedisClient {
  const mode = redisMode(config);
  if (config.clusterNodes.length > 0 && config.sentinels.length > 0) {
    throw new ConfigError(['REDIS_CLUSTER_NODES and REDIS_SENTINELS are both set: a deployment uses one or the other, unset one']);
  }
  const url = parseRedisUrl(config.url);
  const tls = tlsOptions(config, url.tls);
  const common = {
    connectionName: options.name,
    maxRetriesPerRequest: options.blocking ? null : 3,
    enableReadyCheck: true,
  } satisfies RedisOptions;

  if (mode === 'cluster') {
    if (url.db !== 0) {
      throw new ConfigError([`REDIS_URL selects database ${url.db}, but a Redis Cluster has only database 0: remove /${url.db} from the URL`]);
    }
    const clusterOptions: ClusterOptions = {
      redisOptions: { ...common, username: url.username, password: url.password, ...(tls ? { tls } : {}) },
      clusterRetryStrategy: retryStrategy,
      enableReadyCheck: true,
      // With TLS, keep the host name the node was addressed by, so the certificate check sees it.
      ...(tls ? { dnsLookup: (address, callback) => callback(null, address) } : {}),
    };
    return new Cluster(
      config.clusterNodes.map((entry) => hostPort(entry, 'REDIS_CLUSTER_NODES')),
      clusterOptions,
    );
  }

  const base: RedisOptions = { ...common, retryStrategy };
  if (mode === 'sentinel') {
    return new Redis({
      ...base,
      sentinels: config.sentinels.map((entry) => hostPort(entry, 'REDIS_SENTINELS')),
      name: config.sentinelName,
      username: url.username,
      password: url.password,
      db: url.db,
      ...(tls ? { tls, sentinelTLS: tls, enableTLSForSentinelMode: true } : {}),
    });
  }
  return new Redis(config.url, { ...base, ...(tls ? { tls } : {}) });
}

/**
 * What {@link createRedis} would refuse in these settings, every problem at once, without
 * connecting: config loading reports them with the other configuration errors.
 */
export function redisSettingProblems(config: Pick<Config['redis'], 'url' | 'sentinels' | 'clusterNodes' | 'tlsCaFile'>): string[] {
  const problems: string[] = [];
  const check = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems);
    }
  };
  if (config.clusterNodes.length > 0 && config.sentinels.length > 0) {
    problems.push('REDIS_CLUSTER_NODES and REDIS_SENTINELS are both set: a deployment uses one or the other, unset one');
  }
  check(() => {
    const url = parseRedisUrl(config.url);
    if (config.clusterNodes.length > 0 && url.db !== 0) {
      throw new ConfigError([`REDIS_URL selects database ${url.db}, but a Redis Cluster has only database 0: remove /${url.db} from the URL`]);
    }
    tlsOptions({ ...config, sentinelName: undefined, defaulted: false }, url.tls);
  });
  for (const entry of config.sentinels) check(() => hostPort(entry, 'REDIS_SENTINELS'));
  for (const entry of config.clusterNodes) check(() => hostPort(entry, 'REDIS_CLUSTER_NODES'));
  return problems;
}

/** Back off up to 2 s between reconnects; never give up (a Redis restart must heal by itself). */
function retryStrategy(times: number): number {
  return Math.min(50 * 2 ** Math.min(times, 6), 2000);
}

interface ParsedRedisUrl {
  tls: boolean;
  username?: string;
  password?: string;
  db: number;
}

function parseRedisUrl(raw: string): ParsedRedisUrl {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(['REDIS_URL is not a valid URL: use redis://[user:password@]host:port[/db] or rediss://...']);
  }
  const dbPath = url.pathname.replace(/^\//, '');
  const db = dbPath === '' ? 0 : Number(dbPath);
  if (!Number.isInteger(db) || db < 0) {
    throw new ConfigError([`REDIS_URL path must be a database number, for example redis://host:6379/0 (got /${dbPath})`]);
  }
  const decoded = (part: string, what: string) => {
    try {
      return part ? decodeURIComponent(part) : undefined;
    } catch {
      // Never the value itself: it is a secret.
      throw new ConfigError([`REDIS_URL has a ${what} that is not valid percent-encoding: write a % in it as %25 (and @, :, / as %40, %3A, %2F)`]);
    }
  };
  return {
    tls: url.protocol === 'rediss:',
    username: decoded(url.username, 'user name'),
    password: decoded(url.password, 'password'),
    db,
  };
}

function tlsOptions(config: Config['redis'], enabled: boolean): TlsOptions | undefined {
  if (!enabled) {
    if (config.tlsCaFile) {
      // A CA file with a plain-text URL is a half-done TLS set-up; refuse rather than connect unencrypted.
      throw new ConfigError(['REDIS_TLS_CA_FILE is set but REDIS_URL starts with redis://: use rediss:// to turn on TLS, or unset REDIS_TLS_CA_FILE']);
    }
    return undefined;
  }
  if (!config.tlsCaFile) return {};
  try {
    return { ca: readFileSync(config.tlsCaFile) };
  } catch (err) {
    throw new ConfigError([`REDIS_TLS_CA_FILE cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)}): set it to a PEM file of the CA that signed the Redis server certificate`]);
  }
}

/** `host:port` or `[v6]:port`; the port defaults to 26379 for Sentinels and 6379 otherwise. */
function hostPort(entry: string, variable: 'REDIS_SENTINELS' | 'REDIS_CLUSTER_NODES'): { host: string; port: number } {
  const fallback = variable === 'REDIS_SENTINELS' ? 26379 : 6379;
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/.exec(entry);
  const port = match?.[3] === undefined ? fallback : Number(match[3]);
  const host = match?.[1] ?? match?.[2];
  if (!host || port < 1 || port > 65_535) {
    throw new ConfigError([`${variable} has an entry "${entry}" that is not host:port: use a comma-separated list such as 10.0.0.1:${fallback},10.0.0.2:${fallback}`]);
  }
  return { host, port };
}

/**
 * BullMQ key prefix. With Redis Cluster the braces make it a hash tag, so every key of a
 * queue (`{prefix}:name:wait`, `{prefix}:name:123`, ...) lands in one slot, as BullMQ's Lua
 * scripts need.
 */
export function bullPrefix(config: Pick<Config, 'redis' | 'queue'>): string {
  return config.redis.clusterNodes.length > 0 ? `{${config.queue.prefix}}` : config.queue.prefix;
}
