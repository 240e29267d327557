import { describe, expect, it } from 'vitest';
import { loadTestConfig } from '../support/config.js';

import { configProblem } from '../support/config-problem.js';

const real = { AGENT_API_BASE_URL: 'https://openhelixai.com/api/v1', AGENT_API_KEY: 'key-1234' };

const problem = configProblem;

describe('config', () => {
  it('with nothing set, runs the demo with documented defaults, frozen', () => {
    const c = loadTestConfig({});
    expect(c.mode).toBe('demo');
    expect(c).toMatchObject({
      role: 'all',
      http: { host: '127.0.0.1', port: 3000 },
      redis: { url: 'redis://127.0.0.1:6379' },
      queue: { prefix: 'agent-bridge', concurrency: 50, attempts: 5 },
      maxMessageChars: 8000,
      playground: { enabled: true },
    });
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.queue)).toBe(true);
  });

  it('reads the agent service settings and strips a trailing slash', () => {
    const c = loadTestConfig({ ...real, AGENT_API_BASE_URL: 'https://x.test/api/v1/', AGENT_TIMEOUT_MS: '5000' });
    expect(c.mode).toBe('real');
    expect(c.agent).toMatchObject({ baseUrl: 'https://x.test/api/v1', apiKey: 'key-1234', timeoutMs: 5000, otherTimeoutMs: 15000 });
    expect(c.secrets).toContain('key-1234');
  });

  it('registers the password of every URL setting as a secret (raw @ and percent-encoding too)', () => {
    const c = loadTestConfig({
      ...real,
      AGENT_API_BASE_URL: 'https://bridge:agent-pass-1@x.test/api/v1',
      SLACK_BOT_TOKEN: 'xoxb-1234',
      SLACK_SIGNING_SECRET: 'sign-1234',
      SLACK_API_URL: 'https://slack-token-2@slack.test/api/',
      REDIS_URL: 'redis://default:p@ss%2Fword-3@127.0.0.1:6379',
    });
    expect(c.secrets).toEqual(expect.arrayContaining(['agent-pass-1', 'slack-token-2', 'p@ss%2Fword-3', 'p@ss/word-3']));
    // An account name beside a password is not a secret: redacting "default" would blank it in every line.
    expect(c.secrets).not.toContain('default');
    expect(c.secrets).not.toContain('bridge');
  });

  it('names the variable and the fix for each wrong setting', () => {
    expect(problem({ ...real, WORKER_CONCURRENCY: 'lots' })).toMatch(/WORKER_CONCURRENCY must be a whole number/);
    expect(problem({ ...real, ROLE: 'boss' })).toMatch(/ROLE must be all, ingress or worker/);
    expect(problem({ ...real, AGENT_API_BASE_URL: 'ftp://x' })).toMatch(/AGENT_API_BASE_URL must be an http\(s\) URL/);
    // Looks like a URL, is not one (port out of range, broken host): named, and not also "missing".
    for (const url of ['http://127.0.0.1:99999/api/v1', 'http://[bad/api/v1']) {
      const p = problem({ ...real, AGENT_API_BASE_URL: url });
      expect(p).toMatch(/AGENT_API_BASE_URL must be an http\(s\) URL/);
      expect(p).not.toMatch(/AGENT_API_BASE_URL is missing/);
    }
    // A query or fragment would be followed by /chat: every call would go to another path.
    for (const url of ['https://x.test/api/v1?region=eu', 'https://x.test/api/v1/#docs', 'https://x.test/api/v1?']) {
      const p = problem({ ...real, AGENT_API_BASE_URL: url });
      expect(p).toMatch(/AGENT_API_BASE_URL must be the service's base address without a "\?" query or "#" part/);
      expect(p).not.toMatch(/AGENT_API_BASE_URL is missing/);
    }
    expect(problem({ ...real, REDIS_URL: 'localhost:6379' })).toMatch(/REDIS_URL must start with redis:\/\//);
    expect(problem({ ...real, BINDINGS: 'C0123=inst' })).toMatch(/BINDINGS entry "C0123=inst" is not platform:channel=instance/);
    expect(problem({ ...real, LOG_LEVEL: 'loud' })).toMatch(/LOG_LEVEL must be one of/);
  });

  it('reports every configuration problem in one pass: wrong values, missing settings and Redis settings', () => {
    const message = problem({
      SLACK_BOT_TOKEN: 'xoxb-1',
      LOG_LEVEL: 'loud',
      WORKER_CONCURRENCY: 'lots',
      ADMIN_USER: 'ops',
      REDIS_URL: 'redis://127.0.0.1:6379/abc',
      REDIS_SENTINELS: 'a:1:2',
      REDIS_SENTINEL_NAME: 'mymaster',
    });
    for (const expected of [
      /LOG_LEVEL must be one of/,
      /WORKER_CONCURRENCY must be a whole number/,
      /AGENT_API_BASE_URL is missing/,
      /SLACK_SIGNING_SECRET is missing/,
      /ADMIN_USER and ADMIN_PASSWORD go together/,
      /REDIS_URL path must be a database number/,
      /REDIS_SENTINELS has an entry "a:1:2"/,
    ]) {
      expect(message).toMatch(expected);
    }
  });

  it('refuses Redis settings createRedis would refuse, before anything connects', () => {
    expect(problem({ REDIS_CLUSTER_NODES: 'a:7000', REDIS_SENTINELS: 'b:26379', REDIS_SENTINEL_NAME: 'm' })).toMatch(/both set/);
    expect(problem({ REDIS_TLS_CA_FILE: '/nonexistent-ca.pem' })).toMatch(/REDIS_TLS_CA_FILE is set but REDIS_URL starts with redis:\/\//);
    expect(problem({ REDIS_URL: 'rediss://h:6380', REDIS_TLS_CA_FILE: '/nonexistent-ca.pem' })).toMatch(/REDIS_TLS_CA_FILE cannot be read \(ENOENT\)/);
    // A bare % in the password: a message naming the variable and the fix, never the password.
    const badPassword = problem({ REDIS_URL: 'redis://:p%zzsecret@127.0.0.1:6379' });
    expect(badPassword).toMatch(/REDIS_URL has a password that is not valid percent-encoding: write a % in it as %25/);
    expect(badPassword).not.toContain('zzsecret');
  });

  it('marks the Redis address as defaulted only when none is configured', () => {
    expect(loadTestConfig({}).redis).toMatchObject({ url: 'redis://127.0.0.1:6379', defaulted: true });
    expect(loadTestConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).redis.defaulted).toBe(false);
    expect(loadTestConfig({ REDIS_SENTINELS: 's:26379', REDIS_SENTINEL_NAME: 'm' }).redis.defaulted).toBe(false);
    // The test hook moves the default (loopback only), never a configured URL.
    expect(loadTestConfig({ AGENT_BRIDGE_DEFAULT_REDIS_URL: 'redis://127.0.0.1:1234' }).redis.url).toBe('redis://127.0.0.1:1234');
    expect(loadTestConfig({ AGENT_BRIDGE_DEFAULT_REDIS_URL: 'redis://example.com:1234' }).redis.url).toBe('redis://127.0.0.1:6379');
    expect(loadTestConfig({ REDIS_URL: 'redis://r:6379', AGENT_BRIDGE_DEFAULT_REDIS_URL: 'redis://127.0.0.1:1234' }).redis.url).toBe('redis://r:6379');
  });

  it('refuses a partial configuration instead of falling back to the demo', () => {
    expect(problem({ SLACK_BOT_TOKEN: 'xoxb-1' })).toMatch(/AGENT_API_BASE_URL is missing.*demo is off/);
    expect(problem({ AGENT_API_BASE_URL: 'https://x.test/api/v1' })).toMatch(/AGENT_API_KEY is missing/);
    expect(problem({ ...real, SLACK_BOT_TOKEN: 'xoxb-1' })).toMatch(/SLACK_SIGNING_SECRET is missing/);
    expect(problem({ ...real, SLACK_SIGNING_SECRET: 'sig' })).toMatch(/SLACK_BOT_TOKEN is missing/);
    expect(problem({ ...real, ADMIN_USER: 'ops' })).toMatch(/ADMIN_USER and ADMIN_PASSWORD go together/);
  });

  it("refuses a platform's settings without its token, naming them, the token and the fix (audit D2)", () => {
    const discord = { DISCORD_API_URL: 'http://127.0.0.1:9/api', DISCORD_GUILD_ID: '123', DISCORD_ADMIN_ROLE_IDS: '5', DISCORD_SHARD_IDS: '0' };
    expect(problem({ ...real, ...discord })).toMatch(
      /DISCORD_TOKEN is missing \(DISCORD_API_URL, DISCORD_GUILD_ID, DISCORD_ADMIN_ROLE_IDS and DISCORD_SHARD_IDS are set, so Discord is meant to run\): set it to the bot token .*, or remove DISCORD_API_URL, DISCORD_GUILD_ID, DISCORD_ADMIN_ROLE_IDS, DISCORD_SHARD_IDS to run without Discord/,
    );
    expect(problem({ ...real, SLACK_API_URL: 'http://127.0.0.1:9/api/', SLACK_ADMIN_USER_IDS: 'U1' })).toMatch(
      /SLACK_BOT_TOKEN is missing \(SLACK_API_URL and SLACK_ADMIN_USER_IDS are set, so Slack is meant to run\): set it to the Bot User OAuth Token .*, or remove SLACK_API_URL, SLACK_ADMIN_USER_IDS to run without Slack/,
    );
    expect(problem({ ...real, SLACK_CLIENT_SECRET: 'secret-1' })).toMatch(/SLACK_CLIENT_ID is missing \(SLACK_CLIENT_SECRET is set, so Slack is meant to run\)/);
    // Alone, not the demo: the demo would hide the missing token.
    expect(problem({ DISCORD_GUILD_ID: '123' })).toMatch(/DISCORD_TOKEN is missing \(DISCORD_GUILD_ID is set/);
    expect(problem({ SLACK_ADMIN_USER_IDS: 'U1' })).toMatch(/SLACK_BOT_TOKEN is missing \(SLACK_ADMIN_USER_IDS is set/);
  });

  it("counts a platform's default written out as unset, and another process's settings beside a running platform as not this one's", () => {
    // .env.example's values: the playground alone, as with nothing set.
    const written = { SLACK_COMMAND: '/agent', SLACK_WORKSPACE_ADMINS: 'true', SLACK_WORKING_REACTION: 'eyes', DISCORD_ALLOW_BOTS: 'false', DISCORD_REPLY_PING: 'false', DISCORD_SHARD_COUNT: 'auto', DISCORD_API_URL: '' };
    expect(loadTestConfig({ ...real, ...written }).platforms).toEqual({ web: expect.anything() });
    expect(loadTestConfig(written).mode).toBe('demo');
    // docker-compose's Discord shard services: the shared settings' Slack ones, Slack's tokens emptied.
    const shard = loadTestConfig({ ...real, DISCORD_TOKEN: 'discord-token', SLACK_BOT_TOKEN: '', SLACK_ADMIN_USER_IDS: 'U1', SLACK_API_URL: 'http://127.0.0.1:9/api/' });
    expect(Object.keys(shard.platforms)).toEqual(['discord']);
  });

  it('requires PLAYGROUND_TOKEN when HTTP_HOST exposes the playground', () => {
    expect(problem({ HTTP_HOST: '0.0.0.0' })).toMatch(/PLAYGROUND_TOKEN is missing/);
    expect(loadTestConfig({ HTTP_HOST: '0.0.0.0', PLAYGROUND_TOKEN: 'a-long-token' }).playground).toEqual({ enabled: true, token: 'a-long-token' });
    // With a real platform the playground is off unless PLAYGROUND=true.
    const slack = { ...real, SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xapp-1' };
    expect(loadTestConfig(slack).playground.enabled).toBe(false);
    expect(loadTestConfig({ ...slack, PLAYGROUND: 'true' }).playground.enabled).toBe(true);
  });

  it('parses BINDINGS defaults', () => {
    const c = loadTestConfig({ ...real, BINDINGS: 'slack:C0123=inst_a, discord:998877=inst_b' });
    expect(c.bindings).toEqual([
      { platform: 'slack', channelId: 'C0123', instanceId: 'inst_a' },
      { platform: 'discord', channelId: '998877', instanceId: 'inst_b' },
    ]);
  });
});
