import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import type { QueueCounts } from '../../../src/core/platform-context.js';
import { startDiscordBridge, type DiscordHarness, type HarnessOptions } from '../../discord/harness.js';
import { startSlackBridge, type SlackHarness, type SlackHarnessOptions } from '../../slack/harness.js';
import { until, watchProcessErrors } from './guards.js';
import { FAST_TAKEOVER, startWorker, type WorkerProcess } from './workers.js';

/** What a kill suite needs of its harness: the ingress in this process, with its agent and queue. */
export interface KillSuiteHarness {
  prefix: string;
  agent: { baseUrl: string; apiKey: string };
  bridge: { queue: { counts(): Promise<QueueCounts> } };
  close(): Promise<void>;
}

export interface KillSuiteOptions<H extends KillSuiteHarness> {
  /** Starts the ingress (and the emulators) in this process; worker processes do the answering. */
  start(): Promise<H>;
  /** The worker processes' entry file. */
  entry: string;
  /** The workers' platform settings; the agent, the queue prefix and FAST_TAKEOVER are added. */
  platformEnv(h: H): Record<string, string>;
}

/** A file's ingress harness, the worker processes it spawns, and the process errors seen meanwhile. */
export interface KillSuite<H> {
  /** The harness `beforeAll` started. */
  readonly h: H;
  /** Unhandled rejections and uncaught exceptions of this process while the file ran. */
  readonly guard: { readonly errors: string[] };
  /** Starts a worker process (FAST_TAKEOVER: a dead worker's job is taken over within seconds). */
  spawnWorker(): Promise<WorkerProcess>;
  /**
   * Ends a round: waits until the queue is idle (and `also` holds), then SIGKILLs every worker
   * spawned so far, so nothing of this round answers the next one.
   */
  endRound(options?: { timeoutMs?: number; also?: () => boolean }): Promise<void>;
}

/**
 * The set-up of a SIGKILL suite: `beforeAll` starts the harness, `afterAll` stops the error
 * watch, SIGKILLs the workers left and closes the harness. Call it at the top of the file.
 */
export function killSuite<H extends KillSuiteHarness>(options: KillSuiteOptions<H>): KillSuite<H> {
  let harness: H | undefined;
  let env: Record<string, string> = {};
  const workers: WorkerProcess[] = [];
  const guard = watchProcessErrors();

  beforeAll(async () => {
    harness = await options.start();
    env = {
      AGENT_API_BASE_URL: harness.agent.baseUrl,
      AGENT_API_KEY: harness.agent.apiKey,
      ...options.platformEnv(harness),
      QUEUE_PREFIX: harness.prefix,
      ...FAST_TAKEOVER,
    };
  }, 60_000);

  afterAll(async () => {
    guard.stop();
    await Promise.all(workers.map((w) => w.kill9()));
    await harness?.close();
  });

  const h = (): H => {
    if (!harness) throw new Error('the kill suite’s harness is not started (beforeAll failed?)');
    return harness;
  };

  return {
    get h() {
      return h();
    },
    guard,
    async spawnWorker() {
      const w = await startWorker(env, options.entry);
      workers.push(w);
      return w;
    },
    async endRound({ timeoutMs = 15_000, also = () => true } = {}) {
      const queue = h().bridge.queue;
      await until(async () => {
        const c = await queue.counts();
        return c.active + c.waiting + c.delayed === 0 && also();
      }, 'queue idle', timeoutMs);
      await Promise.all(workers.splice(0).map((w) => w.kill9()));
    },
  };
}

const entry = (file: string) => fileURLToPath(new URL(file, import.meta.url));

/** A kill suite on Slack: Bolt over HTTP as the ingress in this process, Slack worker processes. */
export function slackKillSuite(options: Omit<SlackHarnessOptions, 'mode'> = {}): KillSuite<SlackHarness> {
  return killSuite({
    start: () => startSlackBridge({ mode: 'http', ...options, env: { ROLE: 'ingress', LOG_LEVEL: 'warn', ...options.env } }),
    entry: entry('./slack-worker-entry.ts'),
    platformEnv: (h) => ({
      AGENT_SESSION_COOKIE: h.agent.sessionCookie,
      SLACK_BOT_TOKEN: h.slack.identity.botToken,
      SLACK_API_URL: h.slack.apiUrl,
    }),
  });
}

/** A kill suite on Discord: the gateway as the ingress in this process, Discord worker processes. */
export function discordKillSuite(options: HarnessOptions = {}): KillSuite<DiscordHarness> {
  return killSuite({
    start: () => startDiscordBridge({ ...options, env: { ROLE: 'ingress', LOG_LEVEL: 'warn', ...options.env } }),
    entry: entry('./discord-worker-entry.ts'),
    platformEnv: (h) => ({
      DISCORD_TOKEN: h.discord.token,
      DISCORD_API_URL: h.discord.apiUrl,
      DISCORD_GUILD_ID: h.discord.world.guildId,
    }),
  });
}
