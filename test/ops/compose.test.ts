import { copyFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envSchema } from '../../src/config/schema.js';
import { composeConfig, type ComposeModel } from './compose-tools.js';
import { tempDir } from './servers.js';

const ROOT = new URL('../../', import.meta.url).pathname;

describe('docker-compose.yml, as `docker-compose config` reads it', () => {
  let dir: string;
  let model: ComposeModel;

  beforeAll(() => {
    // A copy beside a test .env: the working tree's own .env (if any) is neither needed nor read.
    dir = tempDir('compose');
    copyFileSync(join(ROOT, 'docker-compose.yml'), join(dir, 'docker-compose.yml'));
    writeFileSync(join(dir, '.env'), 'HTTP_PORT=8080\nREDIS_URL=redis://elsewhere:6379\nLOG_LEVEL=debug\n');
    ({ model } = composeConfig(dir));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('has exactly redis, ingress and worker by default, and two Discord shard ingress services behind a profile', () => {
    const always = Object.entries(model.services).filter(([, s]) => !s.profiles?.length);
    expect(always.map(([name]) => name).sort()).toEqual(['ingress', 'redis', 'worker']);
    const shards = Object.entries(model.services).filter(([, s]) => s.profiles?.includes('discord-shards'));
    expect(shards.map(([name]) => name).sort()).toEqual(['discord-shards-0-1', 'discord-shards-2-3']);
    // Together they own every shard of the same count, each once.
    expect(shards.map(([, s]) => [s.environment?.ROLE, String(s.environment?.DISCORD_SHARD_COUNT), s.environment?.DISCORD_SHARD_IDS])).toEqual([
      ['ingress', '4', '0-1'],
      ['ingress', '4', '2-3'],
    ]);
    // Configured like `ingress` (the token, the agent service, the encryption key), Slack left out.
    for (const [, s] of shards) {
      expect(s.environment?.LOG_LEVEL).toBe('debug'); // from .env
      for (const name of ['DISCORD_TOKEN', 'AGENT_API_BASE_URL', 'AGENT_API_KEY', 'INSTALLATION_ENCRYPTION_KEY']) expect(s.environment).toHaveProperty(name);
      for (const name of ['SLACK_BOT_TOKEN', 'SLACK_APP_TOKEN', 'SLACK_SIGNING_SECRET', 'SLACK_CLIENT_ID']) expect(s.environment?.[name]).toBe('');
    }
  });

  it('runs redis 7 with AOF persistence on a volume, noeviction, and a ping healthcheck', () => {
    const redis = model.services.redis!;
    expect(redis.image).toBe('redis:7-alpine');
    const command = Array.isArray(redis.command) ? redis.command.join(' ') : redis.command;
    expect(command).toMatch(/--appendonly yes/);
    expect(command).toMatch(/--maxmemory-policy noeviction/);
    expect(redis.volumes?.some((v) => /^redis-data:\/data\b/.test(v))).toBe(true);
    expect(Object.keys(model.volumes ?? {})).toContain('redis-data');
    expect(redis.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
  });

  it('configures ingress and worker from .env, with the bundled Redis and role winning', () => {
    for (const [name, role] of [['ingress', 'ingress'], ['worker', 'worker']] as const) {
      const service = model.services[name]!;
      expect(service.build).toBeDefined();
      expect(service.environment?.ROLE).toBe(role);
      expect(service.environment?.REDIS_URL).toBe('redis://redis:6379');
      expect(service.environment?.HTTP_HOST).toBe('0.0.0.0');
      expect(service.environment?.LOG_LEVEL).toBe('debug'); // from .env
      expect(service.depends_on?.redis?.condition).toBe('service_healthy');
      expect(service.init).toBe(true);
    }
  });

  it('publishes the HTTP port of ingress, taken from HTTP_PORT in .env', () => {
    const ingress = model.services.ingress!;
    expect(String(ingress.environment?.HTTP_PORT)).toBe('8080');
    expect(ingress.ports).toEqual([{ published: 8080, target: 8080 }]);
  });

  it('lets workers scale (`--scale worker=4`): no container_name, no published port', () => {
    const worker = model.services.worker!;
    expect(worker.container_name).toBeUndefined();
    expect(worker.ports ?? []).toEqual([]);
  });

  it('gives containers longer to stop than the default SHUTDOWN_TIMEOUT_MS (25 s)', () => {
    for (const name of ['ingress', 'worker']) {
      const grace = model.services[name]!.stop_grace_period ?? '10s';
      const seconds = Number(/^(\d+)s$/.exec(grace)?.[1]);
      expect(seconds).toBeGreaterThan(25);
    }
  });

  it('publishes redis on loopback 6379 only, so `npm start` on the host reaches it', () => {
    const ports = (model.services.redis!.ports ?? []).map((p) =>
      typeof p === 'string' ? p.replace(/\/tcp$/, '') : `${(p as { host_ip?: string }).host_ip}:${p.published}:${p.target}`,
    );
    expect(ports).toEqual(['127.0.0.1:6379:6379']);
  });

  it('passes every setting of the config schema to ingress and worker (except the Redis address, role and HTTP bind)', () => {
    const composeOwned = ['REDIS_URL', 'REDIS_SENTINELS', 'REDIS_SENTINEL_NAME', 'REDIS_CLUSTER_NODES', 'ROLE', 'HTTP_HOST', 'HTTP_PORT'];
    const expected = Object.keys(envSchema.shape).filter((k) => !composeOwned.includes(k));
    for (const name of ['ingress', 'worker']) {
      const missing = expected.filter((k) => !(k in (model.services[name]!.environment ?? {})));
      expect(missing, `${name} lacks these settings`).toEqual([]);
    }
  });
});

describe('docker-compose.yml without a .env file', () => {
  it('is valid, and leaves every setting unset (empty) but the compose-owned ones', () => {
    const dir = tempDir('compose-no-env');
    try {
      copyFileSync(join(ROOT, 'docker-compose.yml'), join(dir, 'docker-compose.yml'));
      const { model } = composeConfig(dir);
      const ingress = model.services.ingress!;
      expect(ingress.environment?.ROLE).toBe('ingress');
      expect(String(ingress.environment?.HTTP_PORT)).toBe('3000');
      expect(ingress.environment?.AGENT_API_KEY).toBe('');
      expect(ingress.environment?.LOG_LEVEL).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
