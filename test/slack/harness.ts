import { randomUUID } from 'node:crypto';
import { loadTestConfig } from '../support/config.js';
import { startBridge, type Bridge } from '../../src/app.js';

import { startAgentEmulator, type AgentEmulator, type AgentEmulatorOptions } from '../../src/demo/agent-emulator.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import { Metrics } from '../../src/metrics.js';
import type { PlatformModule } from '../../src/core/platform-context.js';
import { slackPlatform } from '../../adapters/slack/index.js';
import { createSlackAdapter, type SlackAdapter, type SlackAdapterOptions } from '../../adapters/slack/adapter.js';
import { startSlackEmulator, type SlackEmulator, type SlackEmulatorOptions, type SlackTransport } from '../emulators/slack/index.js';
import { LogCapture } from '../support/pipeline.js';
import { deleteKeys } from '../support/redis-cleanup.js';

export type SlackMode = 'http' | 'socket';

/** The people and places of the emulated workspace. */
export const W = {
  admin: 'UADMIN001',
  owner: 'UOWNER001',
  user: 'UUSER0001',
  general: 'C0GENERAL',
  free: 'C0UNBOUND',
  dm: 'D0USER001',
} as const;

export interface SlackHarness {
  mode: SlackMode;
  prefix: string;
  slack: SlackEmulator;
  /** Signed HTTP to POST /slack/events, or Socket Mode envelopes. */
  to: SlackTransport;
  agent: AgentEmulator;
  bridge: Bridge;
  adapter: SlackAdapter;
  logs: LogCapture;
  secrets: SecretRegistry;
  eventsUrl: string;
  close(): Promise<void>;
}

export interface SlackHarnessOptions {
  mode: SlackMode;
  env?: Record<string, string>;
  emulator?: SlackEmulatorOptions;
  agent?: AgentEmulatorOptions;
  adapter?: SlackAdapterOptions;
}

/**
 * The real bridge (role `all`: Bolt, real Redis, the core worker) wired to the Slack emulator
 * and the agent emulator. `#general` and DMs are bound to `demo-helper` (mode `mention`).
 */
export async function startSlackBridge(options: SlackHarnessOptions): Promise<SlackHarness> {
  const prefix = `stest-${randomUUID().slice(0, 8)}`;
  const agent = await startAgentEmulator(options.agent);
  const slack = await startSlackEmulator({
    users: [
      { id: W.admin, name: 'Ada Admin' },
      { id: W.owner, name: 'Olga Owner', isOwner: true },
      { id: W.user, name: 'Uma User' },
    ],
    ...options.emulator,
  });
  const logs = new LogCapture();
  const secrets = new SecretRegistry();
  const id = slack.identity;
  const config = loadTestConfig({
    AGENT_API_BASE_URL: agent.baseUrl,
    AGENT_API_KEY: agent.apiKey,
    AGENT_SESSION_COOKIE: agent.sessionCookie,
    SLACK_BOT_TOKEN: id.botToken,
    ...(options.mode === 'socket' ? { SLACK_APP_TOKEN: id.appToken } : { SLACK_SIGNING_SECRET: id.signingSecret }),
    SLACK_API_URL: slack.apiUrl,
    SLACK_ADMIN_USER_IDS: W.admin,
    QUEUE_PREFIX: prefix,
    HTTP_PORT: '0',
    PLAYGROUND: 'false',
    RETRY_BASE_DELAY_MS: '20',
    BINDINGS: `slack:${W.general}=demo-helper,slack:dm=demo-helper`,
    LOG_LEVEL: 'debug',
    ...options.env,
  });
  let adapter: SlackAdapter | undefined;
  const platform: PlatformModule = {
    ...slackPlatform,
    createReplyPort: (deps) => slackPlatform.createReplyPort(deps),
    createAdapter: (ctx) => (adapter = createSlackAdapter(ctx, { clientPingTimeoutMs: 1_000, ...options.adapter })),
  };
  let bridge: Bridge;
  try {
    bridge = await startBridge({
      config,
      secrets,
      logger: createLogger({ level: config.logLevel, registry: secrets, destination: logs }),
      metrics: new Metrics(),
      platforms: [platform],
    });
  } catch (err) {
    await Promise.allSettled([slack.close(), agent.close()]);
    await deleteKeys(prefix);
    throw err;
  }
  const eventsUrl = `http://127.0.0.1:${bridge.httpPort}/slack/events`;
  return {
    mode: options.mode,
    prefix,
    slack,
    to: options.mode === 'socket' ? slack.socketTransport : slack.http(eventsUrl),
    agent,
    bridge,
    adapter: adapter!,
    logs,
    secrets,
    eventsUrl,
    close: async () => {
      await bridge.stop();
      await Promise.allSettled([slack.close(), agent.close()]);
      await deleteKeys(prefix);
    },
  };
}

/** Someone writes in a channel: the `message` event, and `app_mention` when it mentions the bot. */
export async function say(h: SlackHarness, o: { channel: string; user?: string; text: string; threadTs?: string; files?: Record<string, unknown>[] }) {
  const m = h.slack.userMessage({ channel: o.channel, user: o.user ?? W.user, text: o.text, threadTs: o.threadTs, files: o.files });
  const mentioned = o.text.includes(`<@${h.slack.identity.botUserId}>`);
  if (mentioned) await h.to.event(m.mention);
  await h.to.event(m.message);
  return m;
}

export const botMention = (h: SlackHarness) => `<@${h.slack.identity.botUserId}>`;

/** Chat calls the agent emulator received. */
export const chatCalls = (h: SlackHarness) => h.agent.calls.filter((c) => c.endpoint === 'chat');

/** Polls until `predicate` holds (for state no emulator event announces, such as log lines). */
export async function until<T>(predicate: () => T | undefined | null | false, label: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = predicate();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${label}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Log lines (parsed) whose `msg` matches. */
export function logLines(h: SlackHarness, msg: RegExp): Array<Record<string, unknown>> {
  return h.logs.lines
    .map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        return {};
      }
    })
    .filter((l) => typeof l.msg === 'string' && msg.test(l.msg));
}

/** The bot's successful posts in one thread (or inline in a DM when `threadTs` is undefined). */
export function postsIn(h: SlackHarness, channel: string, threadTs: string | undefined) {
  return h.slack.posted((c) => c.params.channel === channel && c.params.thread_ts === threadTs);
}
