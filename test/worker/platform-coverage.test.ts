import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slack } from '../../adapters/slack/entry.js';
import { slackPlatform } from '../../adapters/slack/index.js';
import { startBridge, type Bridge } from '../../src/app.js';
import { createLogger } from '../../src/logger.js';
import { botMention, postsIn, say, startSlackBridge, until, W, type SlackHarness } from '../slack/harness.js';
import { loadTestConfig } from '../support/config.js';
import { LogCapture } from '../support/log-capture.js';

/**
 * A worker takes every platform's jobs. One started without a platform's settings (an operator
 * who trimmed the workers' environment) used to give up at once on every message of that
 * platform: no agent call, no answer, no notice. It now refuses to start while an ingress of the
 * deployment serves that platform, and one that started anyway leaves those messages to a
 * worker that can answer them.
 */
describe('a worker without a platform its ingress serves', () => {
  let h: SlackHarness;
  const started: Bridge[] = [];
  const logs = new LogCapture();
  /** A worker of the same deployment with only the agent and Redis settings: no Slack. */
  const bareWorker = () =>
    startBridge({
      config: loadTestConfig({ AGENT_API_BASE_URL: h.agent.baseUrl, AGENT_API_KEY: h.agent.apiKey, QUEUE_PREFIX: h.prefix, HTTP_PORT: '0', PLAYGROUND: 'false', ROLE: 'worker' }),
      logger: createLogger({ level: 'info', destination: logs }),
      platforms: [],
      platformSettings: [slack.settings],
    }).then((b) => (started.push(b), b));

  beforeAll(async () => {
    // The ingress alone: the workers are started by the tests.
    h = await startSlackBridge({ mode: 'http', env: { ROLE: 'ingress' } });
  });
  afterAll(async () => {
    for (const b of started) await b.stop();
    await h?.close();
  });

  it('does not start while an ingress serves Slack, and says what to set', async () => {
    await expect(bareWorker()).rejects.toThrow(/serves slack, but this worker has no slack settings.*: give every worker SLACK_BOT_TOKEN \+ SLACK_SIGNING_SECRET too/);
  });

  it('one that started anyway leaves Slack messages to a worker that can answer them: each answered once', async () => {
    // Started before the ingress said what it serves (its record is gone).
    await h.bridge.redis.del(`${h.prefix}:chat:ingress-platforms`);
    const bare = await bareWorker();
    const asked: Array<Awaited<ReturnType<typeof say>>> = [];
    for (let i = 0; i < 8; i++) asked.push(await say(h, { channel: W.general, text: `${botMention(h)} question ${i}` }));
    // Before: the bare worker gave up on each at once, and nobody ever answered them.
    await until(() => logs.lines.some((l) => l.includes('this worker has no slack settings')), 'the bare worker took one');
    await new Promise((r) => setTimeout(r, 500));
    expect(h.agent.chatCalls()).toHaveLength(0);
    expect(logs.lines.filter((l) => l.includes('gave up'))).toEqual([]);
    // A worker with the Slack settings (the ingress's) comes up and the bare one stops: the
    // messages it held are taken by the other once their wait ends.
    started.push(await startBridge({ config: { ...h.bridge.config, role: 'worker', http: { ...h.bridge.config.http, port: 0 } }, logger: createLogger({ level: 'silent' }), platforms: [slackPlatform] }));
    await bare.stop();
    await until(() => asked.every((m, i) => postsIn(h, W.general, m.ts).some((p) => String(p.params.text).includes(`question ${i}`))), 'every question answered', 30_000);
    for (const [i, m] of asked.entries()) expect(postsIn(h, W.general, m.ts).map((p) => String(p.params.text))).toEqual([expect.stringContaining(`question ${i}`)]);
    expect(h.agent.chatCalls().filter((c) => /question \d/.test(c.message))).toHaveLength(8);
    // Said once, not once per message.
    expect(logs.lines.filter((l) => l.includes('this worker has no slack settings'))).toHaveLength(1);
  }, 45_000);
});
