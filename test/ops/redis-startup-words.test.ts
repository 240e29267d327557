import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { describeRedisStartupError, redisWhere, waitForRedis, type RedisTarget } from '../../src/redis-startup.js';
import { freeLoopbackPort } from '../../src/free-port.js';

const standalone = (url: string): RedisTarget => ({ url, sentinels: [], clusterNodes: [] });
const refused = { message: 'connect ECONNREFUSED 127.0.0.1:1' };

describe('Redis start-up errors name the settings in use', () => {
  it('REDIS_URL alone: the URL, without its user name and password', () => {
    expect(describeRedisStartupError(refused, standalone('redis://127.0.0.1:6399'))).toMatch(/^Redis is not reachable at redis:\/\/127\.0\.0\.1:6399: .*or set REDIS_URL$/);
  });

  it('REDIS_URL set by the operator: checks that address, no advice to start a local Redis on 6379', () => {
    const line = describeRedisStartupError(refused, { ...standalone('redis://10.0.0.5:6390'), defaulted: false });
    expect(line).toBe(
      'Redis is not reachable at redis://10.0.0.5:6390 (REDIS_URL): check that it runs there and that this host can reach it (host, port, firewall; rediss:// for a TLS port), or fix REDIS_URL',
    );
    // The default address, unset: the newcomer's ways to get one.
    expect(describeRedisStartupError(refused, { ...standalone('redis://127.0.0.1:6379'), defaulted: true })).toContain('docker compose up -d redis');
  });

  it('Sentinels: names REDIS_SENTINELS and REDIS_SENTINEL_NAME, not the unused REDIS_URL host', () => {
    const line = describeRedisStartupError(refused, { url: 'redis://127.0.0.1:6379', sentinels: ['10.0.0.1:26379', '10.0.0.2:26379'], sentinelName: 'mymaster', clusterNodes: [] });
    expect(line).toContain('REDIS_SENTINELS=10.0.0.1:26379,10.0.0.2:26379');
    expect(line).toContain('mymaster');
    expect(line).toContain('REDIS_SENTINEL_NAME');
    expect(line).not.toContain('127.0.0.1:6379');
    expect(line).not.toContain('set REDIS_URL');
  });

  it('Cluster: names REDIS_CLUSTER_NODES', () => {
    const line = describeRedisStartupError(refused, { url: 'redis://127.0.0.1:6379', sentinels: [], clusterNodes: ['10.0.0.1:7000'] });
    expect(line).toMatch(/^Redis Cluster is not reachable at REDIS_CLUSTER_NODES=10\.0\.0\.1:7000: .*REDIS_CLUSTER_NODES$/);
    expect(line).not.toContain('127.0.0.1:6379');
  });

  it('a wrong password with Sentinels still points at REDIS_URL, where the password is', () => {
    const line = describeRedisStartupError({ message: 'WRONGPASS invalid username-password pair' }, { url: 'redis://:pw@x:1', sentinels: ['s:26379'], sentinelName: 'm', clusterNodes: [] });
    expect(line).toMatch(/^Redis \(master m through REDIS_SENTINELS=s:26379\): authentication failed .*REDIS_URL/);
  });

  it.each([
    ['redis://:p@ssw0rdSECRET@127.0.0.1:1', 'redis://127.0.0.1:1'],
    ['redis://user:a@b@c@127.0.0.1:1/2', 'redis://127.0.0.1:1/2'],
    ['rediss://:plain@host:6380', 'rediss://host:6380'],
    ['redis://127.0.0.1:6379/0', 'redis://127.0.0.1:6379/0'],
  ])('%s is shown as %s', (url, shown) => {
    expect(redisWhere(url)).toBe(shown);
    expect(describeRedisStartupError(refused, standalone(url))).not.toMatch(/SECRET|plain|@/);
  });

  it('waitForRedis with Sentinels that do not answer says so', async () => {
    const port = await freeLoopbackPort();
    const redis = new Redis({ sentinels: [{ host: '127.0.0.1', port }], name: 'mymaster', lazyConnect: false, sentinelRetryStrategy: () => 50 });
    redis.on('error', () => {});
    const target = { url: 'redis://127.0.0.1:6379', sentinels: [`127.0.0.1:${port}`], sentinelName: 'mymaster', clusterNodes: [] };
    await expect(waitForRedis(redis, target, 500)).rejects.toThrow(`no master mymaster through REDIS_SENTINELS=127.0.0.1:${port}`);
    redis.disconnect();
  });
});
