import express from 'express';
import { loadTestConfig } from '../support/config.js';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSlackAdapter } from '../../adapters/slack/adapter.js';
import type { Commands } from '../../src/commands/types.js';

import type { AdapterContext } from '../../src/core/platform-context.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import { startSlackEmulator, type SlackEmulator } from '../emulators/slack/index.js';
import { LogCapture } from '../support/pipeline.js';
import { until } from '../support/until.js';

/** The adapter alone, with stand-ins for the core: start-up errors must say what to fix. */
describe('Slack adapter start-up', () => {
  let slack: SlackEmulator;
  let redis: Redis;
  beforeAll(async () => {
    slack = await startSlackEmulator();
    redis = new Redis({ lazyConnect: true });
  });
  afterAll(async () => {
    redis.disconnect();
    await slack.close();
  });

  function context(env: Record<string, string>, logs = new LogCapture()): AdapterContext {
    const config = loadTestConfig({ AGENT_API_BASE_URL: 'http://127.0.0.1:1/api/v1', AGENT_API_KEY: 'k', SLACK_API_URL: slack.apiUrl, PLAYGROUND: 'false', ...env });
    return {
      config,
      logger: createLogger({ level: 'debug', destination: logs }),
      secrets: new SecretRegistry(),
      ingress: { handle: async () => ({ status: 'dropped', reason: 'not_bound' }) },
      seen: { first: async () => true, firstHere: () => true, lease: async () => ({ kind: 'taken', lease: { settle: async () => {}, release: async () => {}, stop: () => {} } }), forget: async () => {} },
      commands: {} as Commands,
      http: express(),
      redis,
      replyPort: {} as AdapterContext['replyPort'],
      bindings: {} as AdapterContext['bindings'],
      queueInfo: {} as AdapterContext['queueInfo'],
    };
  }

  it('names SLACK_BOT_TOKEN when Slack refuses it, at once (no second auth.test)', async () => {
    const wrong = () => slack.callsOf('auth.test', (c) => c.authorization === 'Bearer xoxb-wrong').length;
    const before = wrong();
    const t0 = Date.now();
    const adapter = createSlackAdapter(context({ SLACK_BOT_TOKEN: 'xoxb-wrong', SLACK_SIGNING_SECRET: 's' }));
    await expect(adapter.start()).rejects.toThrow(/Slack did not accept SLACK_BOT_TOKEN \(.*invalid_auth/);
    expect(wrong() - before).toBe(1);
    expect(Date.now() - t0).toBeLessThan(1000);
    await adapter.stop();
  });

  it('says Slack is unreachable when it still is after asking again within the start-up budget', async () => {
    const t0 = Date.now();
    const adapter = createSlackAdapter(context({ SLACK_BOT_TOKEN: 'xoxb-x', SLACK_SIGNING_SECRET: 's', SLACK_API_URL: 'http://127.0.0.1:9/api/' }), { startupRetryBudgetMs: 1500 });
    await expect(adapter.start()).rejects.toThrow(/could not reach Slack at http:\/\/127\.0\.0\.1:9\/api\//);
    // Asked at 0 s, again after 1 s; the next wait (2 s) would overrun the budget.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
  });

  it('names the unreachable SLACK_API_URL without the password it carries', async () => {
    const adapter = createSlackAdapter(context({ SLACK_BOT_TOKEN: 'xoxb-x', SLACK_SIGNING_SECRET: 's', SLACK_API_URL: 'http://user:url-pass-SECRET@127.0.0.1:9/api/' }), { startupRetryBudgetMs: 0 });
    const failure = await adapter.start().then(() => undefined, (err: Error) => err.message);
    expect(failure).toMatch(/could not reach Slack at http:\/\/127\.0\.0\.1:9\/api\//);
    expect(failure).not.toContain('url-pass-SECRET');
  });

  it.each([
    ['a 429 (waits its Retry-After)', { error: 'ratelimited', retryAfterSeconds: 1 }, 1],
    ['a 500 and a 503 (backs off)', { error: 'http_500' }, 2],
  ] as const)('starts when auth.test first answers %s', async (_what, fault, times) => {
    const calls = () => slack.callsOf('auth.test').length;
    const before = calls();
    if (times === 2) {
      slack.fail('auth.test', { ...fault });
      slack.fail('auth.test', { error: 'http_503' });
    } else slack.fail('auth.test', { ...fault });
    const t0 = Date.now();
    const adapter = createSlackAdapter(context({ SLACK_BOT_TOKEN: slack.identity.botToken, SLACK_SIGNING_SECRET: 's' }));
    await adapter.start();
    expect(await adapter.identity()).toMatchObject({ userId: slack.identity.botUserId });
    expect(calls() - before).toBe(times + 1);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(times === 2 ? 2900 : 950);
    await adapter.stop();
  });

  it('names SLACK_APP_TOKEN when Socket Mode is refused', async () => {
    const adapter = createSlackAdapter(context({ SLACK_BOT_TOKEN: slack.identity.botToken, SLACK_APP_TOKEN: 'xapp-wrong' }));
    expect(adapter.mode).toBe('socket');
    await expect(adapter.start()).rejects.toThrow(/Socket Mode did not connect \(invalid_auth: check SLACK_APP_TOKEN/);
    await adapter.stop();
  });

  it('says at start-up that Socket Mode is turned off in the app (link_disabled), and stops cleanly while it waits', async () => {
    slack.socket.disableLink();
    try {
      const logs = new LogCapture();
      const adapter = createSlackAdapter(context({ SLACK_BOT_TOKEN: slack.identity.botToken, SLACK_APP_TOKEN: slack.identity.appToken }, logs));
      const start = adapter.start().then(
        () => 'started',
        (err: Error) => err.message,
      );
      const line = await until(() => logs.matching(/link_disabled/).find((l) => l.level === 50), 'an error naming link_disabled');
      expect(String(line.msg)).toContain('Socket Mode');
      await adapter.stop();
      // Stopped before Slack let it connect: start-up ends, without a TypeError about `undefined`.
      expect(await start).not.toMatch(/undefined/);
    } finally {
      slack.socket.enableLink();
    }
  });

  it('starts and stops idempotently in both modes, asking auth.test once each', async () => {
    const okAuth = () => slack.callsOf('auth.test').filter((c) => c.response.ok === true).length;
    const before = okAuth();
    for (const env of [{ SLACK_SIGNING_SECRET: 's' }, { SLACK_APP_TOKEN: slack.identity.appToken }] as Array<Record<string, string>>) {
      const adapter = createSlackAdapter(context({ SLACK_BOT_TOKEN: slack.identity.botToken, ...env }));
      await Promise.all([adapter.start(), adapter.start()]);
      expect(await adapter.identity()).toEqual({ userId: slack.identity.botUserId, botId: slack.identity.botId, teamId: slack.identity.teamId });
      await Promise.all([adapter.stop(), adapter.stop()]);
    }
    expect(okAuth() - before).toBe(2);
  });
});
