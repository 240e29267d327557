import { randomUUID } from 'node:crypto';
import { loadTestConfig } from '../support/config.js';
import { Queue, Worker } from 'bullmq';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, type Config } from '../../src/config/load.js';
import { createBindingStore } from '../../src/bindings/store.js';
import { ChatQueue } from '../../src/queue/chat-queue.js';
import { FetchAcquire } from '../../src/queue/fetch-acquire.js';
import type { AcquireResult } from '../../src/queue/mailbox.js';
import { QUEUE_NAME, jobIdFor, type ChatJobData, type ChatMessage } from '../../src/queue/types.js';
import { createQuota } from '../../src/quota/quota.js';
import { bullPrefix, createRedis, redisMode, type RedisClient } from '../../src/redis.js';
import { startCluster, startSentinel, startTlsRedis } from './servers.js';

const SHARED_REDIS = 'redis://127.0.0.1:6379';

/** Config as the process would build it from these environment variables. */
function configFrom(env: Record<string, string>): Readonly<Config> {
  return loadTestConfig({ QUEUE_PREFIX: `ops-test-${randomUUID().slice(0, 8)}`, ...env });
}

/** A Slack message in #C1 of workspace T1, its own thread `ts`. */
function slackMessage(ts: string): ChatMessage {
  return {
    platform: 'slack',
    messageId: `C1:${ts}`,
    conversationId: `slack:T1:C1:${ts}`,
    workspaceId: 'T1',
    channelId: 'C1',
    instanceId: 'inst-1',
    text: 'hello',
    userId: 'U1',
    reply: { channelId: 'C1', messageId: ts },
    receivedAt: Date.now(),
    errorPolicy: 'reply',
    context: 'off',
  };
}

/**
 * One job through a real BullMQ queue and worker over connections made by createRedis,
 * under the prefix bullPrefix gives; everything it created is removed afterwards.
 */
async function jobRoundTrip(config: Readonly<Config>): Promise<unknown> {
  const name = `ops-${randomUUID()}`;
  const prefix = bullPrefix(config);
  const queueConnection = createRedis(config.redis, { name: 'ops-test-queue' });
  const workerConnection = createRedis(config.redis, { blocking: true, name: 'ops-test-worker' });
  const queue = new Queue(name, { connection: queueConnection, prefix });
  const worker = new Worker(name, async (job) => `echo:${String(job.data.text)}`, { connection: workerConnection, prefix });
  try {
    const result = new Promise((resolve, reject) => {
      worker.on('completed', (_job, value) => resolve(value));
      worker.on('failed', (_job, err) => reject(err));
    });
    await queue.add('message', { text: 'hello' });
    return await result;
  } finally {
    await worker.close();
    await queue.obliterate({ force: true });
    await queue.close();
    await Promise.all([queueConnection.quit(), workerConnection.quit()]);
  }
}

/** The first connection error, after which the client is stopped (it would retry forever). */
function firstError(client: RedisClient): Promise<Error> {
  return new Promise((resolve) => {
    client.once('error', (err: Error) => {
      client.disconnect();
      resolve(err);
    });
  });
}

describe('Redis over TLS (rediss://) against a local TLS-only redis-server', () => {
  let server: Awaited<ReturnType<typeof startTlsRedis>>;
  beforeAll(async () => {
    server = await startTlsRedis();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('verifies the server with REDIS_TLS_CA_FILE and carries BullMQ jobs', async () => {
    const config = configFrom({ REDIS_URL: `rediss://127.0.0.1:${server.port}`, REDIS_TLS_CA_FILE: server.caFile });
    expect(redisMode(config.redis)).toBe('standalone');
    const redis = createRedis(config.redis);
    try {
      expect(await redis.ping()).toBe('PONG');
    } finally {
      await redis.quit();
    }
    expect(await jobRoundTrip(config)).toBe('echo:hello');
  });

  it('refuses a certificate that REDIS_TLS_CA_FILE does not vouch for', async () => {
    const config = configFrom({ REDIS_URL: `rediss://127.0.0.1:${server.port}`, REDIS_TLS_CA_FILE: server.otherCaFile });
    const err = await firstError(createRedis(config.redis));
    expect(err.message).toMatch(/certificate/i);
  });

  it('without REDIS_TLS_CA_FILE trusts only the system CAs, so a private CA is refused', async () => {
    const config = configFrom({ REDIS_URL: `rediss://127.0.0.1:${server.port}` });
    const err = await firstError(createRedis(config.redis));
    expect(err.message).toMatch(/certificate/i);
  });
});

describe('Redis through Sentinel', () => {
  const masterName = `ops-test-${randomUUID().slice(0, 8)}`;
  let sentinel: Awaited<ReturnType<typeof startSentinel>>;
  beforeAll(async () => {
    sentinel = await startSentinel(masterName);
  });
  afterAll(async () => {
    await sentinel?.stop();
  });

  it('finds the master through REDIS_SENTINELS, whatever host REDIS_URL names', async () => {
    // Port 1 answers nothing: a working connection can only have come from the Sentinel.
    const config = configFrom({
      REDIS_URL: 'redis://127.0.0.1:1',
      REDIS_SENTINELS: `127.0.0.1:${sentinel.port}`,
      REDIS_SENTINEL_NAME: masterName,
    });
    expect(redisMode(config.redis)).toBe('sentinel');
    const viaSentinel = createRedis(config.redis);
    const direct = new Redis(SHARED_REDIS);
    const key = `${config.queue.prefix}:sentinel-probe`;
    try {
      await viaSentinel.set(key, 'through-sentinel', 'EX', 60);
      expect(await direct.get(key)).toBe('through-sentinel');
    } finally {
      await direct.del(key);
      await Promise.all([viaSentinel.quit(), direct.quit()]);
    }
    expect(await jobRoundTrip(config)).toBe('echo:hello');
  });
});

describe('Redis Cluster against a local three-node cluster', () => {
  let cluster: Awaited<ReturnType<typeof startCluster>>;
  beforeAll(async () => {
    cluster = await startCluster();
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('opens an ioredis Cluster and runs BullMQ under the hash-tagged prefix', async () => {
    const config = configFrom({ REDIS_CLUSTER_NODES: cluster.nodes.join(',') });
    expect(redisMode(config.redis)).toBe('cluster');
    expect(bullPrefix(config)).toBe(`{${config.queue.prefix}}`);
    const redis = createRedis(config.redis);
    try {
      expect(redis).toBeInstanceOf(Cluster);
      expect(await redis.ping()).toBe('PONG');
    } finally {
      await redis.quit();
    }
    expect(await jobRoundTrip(config)).toBe('echo:hello');
  });

  it("carries the application's own scripts too: mailbox, quota and bindings under the same prefix", async () => {
    const config = configFrom({ REDIS_CLUSTER_NODES: cluster.nodes.join(',') });
    const prefix = bullPrefix(config);
    // As src/app.ts wires them: the stores are typed against the plain client, a Cluster speaks the same commands.
    const redis = createRedis(config.redis) as Redis;
    const queue = new ChatQueue({ connection: redis, redis, prefix, keepCompleted: { age: 60, count: 10 }, keepFailed: { age: 60, count: 10 } });
    const message = slackMessage('1700.1');
    try {
      expect((await queue.enqueue(message)).status).toBe('queued');
      expect((await queue.enqueue(message)).status).toBe('duplicate');
      expect((await queue.counts()).waiting).toBe(1);
      // Both pushes ran with BullMQ's add in one script, whose keys all sit in the queue's slot.
      expect(queue.pushAdd.counts).toEqual({ fused: 2, separate: 0 });
      // The conversation is reserved for the message's own job, as a worker would run it.
      const fence = { jobId: jobIdFor('slack', message.messageId), token: '' };
      const lease = await queue.mailbox.acquire(message.conversationId, fence);
      expect(lease.status === 'ok' && lease.head?.message?.text).toBe('hello');
      expect(await queue.mailbox.advance(message.conversationId, fence, { messageId: message.messageId, message })).toBeUndefined();

      const quota = createQuota({ redis, prefix: `${prefix}:chat`, defaults: { userPerMinute: 1, userPerDay: 10, channelPerMinute: 10, channelPerDay: 10 } });
      expect(await quota.consume({ platform: 'slack', channelId: 'C1', userId: 'U1' })).toEqual({ ok: true });
      expect((await quota.consume({ platform: 'slack', channelId: 'C1', userId: 'U1' })).ok).toBe(false);

      const bindings = createBindingStore({ redis, prefix: `${prefix}:chat`, defaults: [] });
      await bindings.set('slack', 'C1', { instanceId: 'inst-1', mode: 'mention', errorPolicy: 'reply', context: 'off', source: 'admin' });
      expect((await bindings.get('slack', 'C1'))?.instanceId).toBe('inst-1');
    } finally {
      await queue.queue.obliterate({ force: true });
      await queue.close();
      await redis.quit();
    }
  });

  it("runs the worker's fetch that acquires and finish that advances, whose keys are built inside the script, in the queue's slot", async () => {
    const config = configFrom({ REDIS_CLUSTER_NODES: cluster.nodes.join(',') });
    const prefix = bullPrefix(config);
    const redis = createRedis(config.redis) as Redis;
    const blocking = createRedis(config.redis, { blocking: true }) as Redis;
    const queue = new ChatQueue({ connection: redis, redis, prefix, keepCompleted: { age: 60, count: 10 }, keepFailed: { age: 60, count: 10 } });
    const message = slackMessage('1700.2');
    const fetchAcquire = new FetchAcquire({ mailbox: queue.mailbox, lockMs: 30_000 });
    const taken: Array<AcquireResult | undefined> = [];
    const worker = new Worker<ChatJobData>(
      QUEUE_NAME,
      async (job, token) => {
        const acquired = fetchAcquire.take(job.id!, token);
        taken.push(acquired);
        if (acquired?.status === 'ok' && acquired.head) {
          const pendingKey = queue.mailbox.keys.channelPending('slack', 'C1');
          fetchAcquire.finishWith(job.id!, { conversationId: job.data.conversationId, messageId: acquired.head.messageId, pendingKey, data: job.data });
        }
      },
      { connection: blocking, prefix },
      fetchAcquire.backendFactory,
    );
    try {
      expect((await queue.enqueue(message)).status).toBe('queued');
      const jobId = jobIdFor('slack', message.messageId);
      for (let i = 0; i < 200 && (await queue.queue.getJobState(jobId)) !== 'completed'; i++) await new Promise((r) => setTimeout(r, 25));
      expect(taken).toEqual([expect.objectContaining({ status: 'ok', head: expect.objectContaining({ messageId: message.messageId }) })]);
      expect(fetchAcquire.counts).toMatchObject({ acquiredOnFetch: 1, advancedOnFinish: 1 });
      expect(await redis.llen(queue.mailbox.keys.mailbox(message.conversationId))).toBe(0);
      expect(await redis.exists(queue.mailbox.keys.lease(message.conversationId))).toBe(0);
    } finally {
      await worker.close();
      await queue.queue.obliterate({ force: true });
      await queue.close();
      await redis.quit();
      await blocking.quit();
    }
  });

  it('shows why the hash tag is there: without it BullMQ scripts cross slots', async () => {
    const config = configFrom({ REDIS_CLUSTER_NODES: cluster.nodes.join(',') });
    const connection = createRedis(config.redis);
    const queue = new Queue(`ops-${randomUUID()}`, { connection, prefix: config.queue.prefix });
    try {
      await expect(queue.add('message', { text: 'hello' })).rejects.toThrow(/CROSSSLOT|same slot/i);
    } finally {
      await queue.close();
      await connection.quit();
    }
  });
});

describe('bullPrefix', () => {
  it('is the plain prefix outside a cluster and a hash tag inside one', () => {
    expect(bullPrefix(configFrom({ QUEUE_PREFIX: 'bridge' }))).toBe('bridge');
    expect(bullPrefix(configFrom({ QUEUE_PREFIX: 'bridge', REDIS_CLUSTER_NODES: '10.0.0.1:6379' }))).toBe('{bridge}');
  });
});

describe('Redis settings that cannot work are refused before connecting', () => {
  const refuse = (env: Record<string, string>) => () => createRedis(configFrom(env).redis, {});

  it('a CA file with a plain redis:// URL', () => {
    expect(refuse({ REDIS_URL: 'redis://127.0.0.1:6379', REDIS_TLS_CA_FILE: '/etc/hostname' })).toThrow(
      /REDIS_TLS_CA_FILE is set but REDIS_URL starts with redis:\/\//,
    );
  });

  it('a CA file that cannot be read', () => {
    expect(refuse({ REDIS_URL: 'rediss://127.0.0.1:6379', REDIS_TLS_CA_FILE: '/nonexistent/ca.pem' })).toThrow(
      /REDIS_TLS_CA_FILE cannot be read \(ENOENT\)/,
    );
  });

  it('an entry of REDIS_SENTINELS or REDIS_CLUSTER_NODES that is not host:port', () => {
    expect(refuse({ REDIS_SENTINELS: '10.0.0.1:26379,10.0.0.2:port', REDIS_SENTINEL_NAME: 'mymaster' })).toThrow(
      /REDIS_SENTINELS has an entry "10.0.0.2:port"/,
    );
    expect(refuse({ REDIS_CLUSTER_NODES: '10.0.0.1:99999' })).toThrow(/REDIS_CLUSTER_NODES has an entry "10.0.0.1:99999"/);
  });

  it('Sentinel and Cluster at once, and a database number on a Cluster', () => {
    expect(refuse({ REDIS_SENTINELS: '10.0.0.1', REDIS_SENTINEL_NAME: 'mymaster', REDIS_CLUSTER_NODES: '10.0.0.2' })).toThrow(
      /REDIS_CLUSTER_NODES and REDIS_SENTINELS are both set/,
    );
    expect(refuse({ REDIS_URL: 'redis://127.0.0.1:6379/2', REDIS_CLUSTER_NODES: '10.0.0.2' })).toThrow(/only database 0/);
  });

  it('throws ConfigError, like every other configuration problem', () => {
    expect(refuse({ REDIS_CLUSTER_NODES: 'a:b' })).toThrow(ConfigError);
  });
});
