import { randomBytes } from 'node:crypto';
import type { Bridge } from '../../src/app.js';
import { startAgentEmulator, type AgentEmulator, type AgentEmulatorOptions } from '../../src/demo/agent-emulator.js';
import type { SecretRegistry } from '../../src/logger.js';
import type { PlatformModule } from '../../src/core/platform-context.js';
import { slackPlatform } from '../../adapters/slack/index.js';
import { createSlackAdapter, type SlackAdapter, type SlackAdapterOptions } from '../../adapters/slack/adapter.js';
import { createSlackReplyPort, type SlackReplyPortOptions } from '../../adapters/slack/reply-port.js';
import { startSlackEmulator, type SlackEmulator, type SlackEmulatorOptions, type SlackTransport } from '../emulators/slack/index.js';
import { newPrefix, startTestBridge } from '../support/bridge-harness.js';
import type { LogCapture } from '../support/log-capture.js';
import { slackEnv } from '../support/platform-env.js';

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
  /** Options of the workers' Slack reply port (e.g. a short status refresh). */
  replyPort?: SlackReplyPortOptions;
  /** Runs once the emulators are up, before the bridge starts: Redis state left by an earlier run (the upgrade suite). */
  beforeStart?(o: { prefix: string; slack: SlackEmulator; agent: AgentEmulator }): Promise<void>;
}

/**
 * The real bridge (role `all`: Bolt, real Redis, the core worker) wired to the Slack emulator
 * and the agent emulator. `#general` and DMs are bound to `demo-helper` (mode `mention`).
 */
export async function startSlackBridge(options: SlackHarnessOptions): Promise<SlackHarness> {
  const prefix = newPrefix('stest');
  const agent = await startAgentEmulator(options.agent);
  const slack = await startSlackEmulator({
    users: [
      { id: W.admin, name: 'Ada Admin' },
      { id: W.owner, name: 'Olga Owner', isOwner: true },
      { id: W.user, name: 'Uma User' },
    ],
    ...options.emulator,
  });
  await options.beforeStart?.({ prefix, slack, agent }).catch(async (err: unknown) => {
    await Promise.allSettled([slack.close(), agent.close()]);
    throw err;
  });
  let adapter: SlackAdapter | undefined;
  const platform: PlatformModule = {
    ...slackPlatform,
    createReplyPort: (deps) => createSlackReplyPort(deps, options.replyPort),
    createAdapter: (ctx) => (adapter = createSlackAdapter(ctx, { clientPingTimeoutMs: 1_000, ...options.adapter })),
  };
  const t = await startTestBridge({
    prefix,
    agent,
    env: {
      AGENT_SESSION_COOKIE: agent.sessionCookie,
      ...slackEnv(slack, options.mode, slack.identity),
      SLACK_ADMIN_USER_IDS: W.admin,
      BINDINGS: `slack:${W.general}=demo-helper,slack:dm=demo-helper`,
      ...options.env,
    },
    platforms: [platform],
    closeWith: [slack],
  });
  const eventsUrl = `http://127.0.0.1:${t.bridge.httpPort}/slack/events`;
  return {
    mode: options.mode,
    prefix,
    slack,
    to: options.mode === 'socket' ? slack.socketTransport : slack.http(eventsUrl),
    agent,
    bridge: t.bridge,
    adapter: adapter!,
    logs: t.logs,
    secrets: t.secrets,
    eventsUrl,
    close: t.close,
  };
}

/** The OAuth app the emulator and the bridge agree on in the "Add to Slack" suites. */
const OAUTH_APP = { clientId: '1111.2222', clientSecret: 'emulated-client-secret' } as const;

export interface AddToSlackOptions {
  /** Settings on top of the OAuth ones (bindings, account mode, …). */
  env?: Record<string, string>;
  agent?: AgentEmulatorOptions;
  /** The emulator's token rotation (seconds a token lives); off when absent. */
  rotateAfterSeconds?: number;
  /** INSTALLATION_ENCRYPTION_KEY; a fresh random one when absent. */
  encryptionKey?: string;
  /** Options of the workers' Slack reply port. */
  replyPort?: SlackReplyPortOptions;
}

/** The bridge over HTTP with "Add to Slack" on (no bot token; OAuth v2 against the emulator). */
export function startAddToSlackBridge(options: AddToSlackOptions = {}): Promise<SlackHarness> {
  const rotate = options.rotateAfterSeconds === undefined ? {} : { rotateAfterSeconds: options.rotateAfterSeconds };
  return startSlackBridge({
    mode: 'http',
    emulator: { oauth: { ...OAUTH_APP, ...rotate } },
    env: {
      SLACK_BOT_TOKEN: '',
      SLACK_CLIENT_ID: OAUTH_APP.clientId,
      SLACK_CLIENT_SECRET: OAUTH_APP.clientSecret,
      SLACK_STATE_SECRET: 'emulated-state-secret-long-enough',
      INSTALLATION_ENCRYPTION_KEY: options.encryptionKey ?? randomBytes(32).toString('base64'),
      LOG_LEVEL: 'info',
      ...options.env,
    },
    agent: options.agent,
    ...(options.replyPort ? { replyPort: options.replyPort } : {}),
  });
}

/**
 * The browser's walk: /slack/install → Slack's consent page (approved in `teamId`, org-wide
 * when `org` is given) → /slack/oauth_redirect with the state cookie. Asserts nothing.
 */
export async function installWorkspace(h: SlackHarness, teamId: string, org?: { enterpriseId: string }) {
  const base = `http://127.0.0.1:${h.bridge.httpPort}`;
  const start = await fetch(`${base}/slack/install`, { redirect: 'manual' });
  const authorizeUrl = start.headers.get('location')!;
  const cookie = start.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const back = new URL(h.slack.oauth!.approve(authorizeUrl, { teamId, ...(org ? { enterpriseId: org.enterpriseId, orgWide: true } : {}) }));
  const done = await fetch(`${base}/slack/oauth_redirect${back.search}`, { headers: { cookie }, redirect: 'manual' });
  return { start, authorizeUrl, done };
}

/** Someone writes in a channel: the `message` event, and `app_mention` when it mentions the bot. */
export async function say(h: SlackHarness, o: { channel: string; user?: string; text: string; threadTs?: string; files?: Record<string, unknown>[] }) {
  const m = h.slack.userMessage({ channel: o.channel, user: o.user ?? W.user, text: o.text, threadTs: o.threadTs, files: o.files });
  // Slack sends app_mention only outside DMs (a DM with the app is `message.im` alone).
  const mentioned = o.text.includes(`<@${h.slack.identity.botUserId}>`) && !o.channel.startsWith('D');
  if (mentioned) await h.to.event(m.mention);
  await h.to.event(m.message);
  return m;
}

export const botMention = (h: SlackHarness) => `<@${h.slack.identity.botUserId}>`;

/** Chat calls the agent emulator received. */
export const chatCalls = (h: SlackHarness) => h.agent.calls.filter((c) => c.endpoint === 'chat');

export { until } from '../support/until.js';

/** Log lines (parsed) whose `msg` matches. */
export const logLines = (h: SlackHarness, msg: RegExp): Array<Record<string, unknown>> => h.logs.matching(msg);

/** The bot's successful posts in one thread (or inline in a DM when `threadTs` is undefined). */
export function postsIn(h: SlackHarness, channel: string, threadTs: string | undefined) {
  return h.slack.posted((c) => c.params.channel === channel && c.params.thread_ts === threadTs);
}
