import { Agent, request } from 'node:http';
import { slackSignature } from '../../test/emulators/slack/sender.js';
import type { SlackInfo } from '../procs/services-types.js';
import { Child, type SpawnOptions } from './children.js';
import { deleteKeys } from './redis-admin.js';
import type { BenchContext } from '../scenarios/context.js';

/** POSTs a body signed as Slack signs events; resolves with the status once the whole answer is in. */
export function postSigned(url: URL, agent: Agent, secret: string, body: string, headers: Record<string, string> = {}): Promise<number> {
  const timestamp = Math.floor(Date.now() / 1000);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'x-slack-request-timestamp': String(timestamp),
          'x-slack-signature': slackSignature(secret, timestamp, body),
          ...headers,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** What a Slack app on the bench needs (the bridge or a peer): Redis and its prefix, the agent, the Slack emulator. */
export function slackAppEnv(ctx: BenchContext, slack: SlackInfo, prefix: string): Record<string, string> {
  return {
    REDIS_URL: ctx.settings.redisUrl,
    QUEUE_PREFIX: prefix,
    AGENT_API_BASE_URL: ctx.services.readyValue.agentBaseUrl,
    AGENT_API_KEY: ctx.services.readyValue.agentApiKey,
    SLACK_BOT_TOKEN: slack.identity.botToken,
    SLACK_SIGNING_SECRET: slack.identity.signingSecret,
    SLACK_API_URL: slack.apiUrl,
  };
}

/** The bridge's own settings on the bench: quiet, no playground, `channel` bound, no per-channel cap. */
export function benchBridgeEnv(channel: string): Record<string, string> {
  return {
    HTTP_PORT: '0',
    PLAYGROUND: 'false',
    LOG_LEVEL: 'warn',
    SHUTDOWN_TIMEOUT_MS: '5000',
    BINDINGS: `slack:${channel}=demo-helper`,
    MAX_PENDING_PER_CHANNEL: '0',
  };
}

/** A Slack app running in its own process, serving the Events API over HTTP. */
export interface SlackEventsApp {
  child: Child<{ httpPort: number }>;
  /** Its POST /slack/events. */
  url: URL;
  /** A keep-alive agent for posting to it. */
  agent: Agent;
  /** Where its Redis keys live (deleted once it has stopped). */
  prefix: string;
}

/** One run of a Slack events app in a scenario: its name, its process label, its environment given its Redis prefix. */
export interface SlackEventsRun {
  /** The run's name in the scenario, e.g. `s5-bridge`: its Redis keys live under `<runId>-<run>`. */
  run: string;
  /** Name in logs and of the CPU profile; the run's name when not given. */
  label?: string;
  env: (prefix: string) => Record<string, string>;
}

/**
 * Spawns `entry` (ready with its HTTP port; profiled when the bench profiles) with its Redis keys
 * under the run's own prefix, and hands it to `use`; then, however `use` ends, stops it and
 * deletes those keys.
 */
export async function withSlackEventsApp<T>(
  ctx: BenchContext,
  entry: URL,
  options: SlackEventsRun,
  use: (app: SlackEventsApp) => Promise<T>,
): Promise<T> {
  const prefix = `${ctx.runId}-${options.run}`;
  const spawn: SpawnOptions = { label: options.label ?? options.run, profile: ctx.settings.profile, env: options.env(prefix) };
  const child = await Child.spawn<{ httpPort: number }>(entry, spawn);
  const agent = new Agent({ keepAlive: true });
  try {
    return await use({ child, agent, prefix, url: new URL(`http://127.0.0.1:${child.readyValue.httpPort}/slack/events`) });
  } finally {
    agent.destroy();
    await child.stop();
    await deleteKeys(ctx.redis, prefix);
  }
}
