import { readFileSync } from 'node:fs';
import { parse as parseDotenv } from 'dotenv';
import { encryptionKeyBytes, envSchema, type Env } from './schema.js';
import { parseBindingDefaults, type BindingDefault } from './bindings-env.js';
import { ConfigError } from './config-error.js';
import { pastedSecretProblems } from './pasted-secret.js';
import { redisSettingProblems } from '../redis.js';
import type { Platform } from '../core/conversation.js';
import { userinfoSecrets } from '../core/url-userinfo.js';
import type { PlatformSettings, RawEnv } from './platform-settings.js';

export { ConfigError };

export interface AgentConfig {
  /** `{base_url}`, including `/api/v1`, without a trailing slash. */
  baseUrl: string;
  apiKey?: string;
  sessionCookie?: string;
  sessionToken?: string;
  /** Limit of the chat call. */
  timeoutMs: number;
  /** Limit of every other call. */
  otherTimeoutMs: number;
  /** Largest answer body read (AGENT_MAX_RESPONSE_BYTES); unset: no limit. */
  maxResponseBytes?: number;
}

export interface QuotaLimits {
  userPerMinute: number;
  userPerDay: number;
  channelPerMinute: number;
  channelPerDay: number;
}

export interface Config {
  /** `demo` when nothing real is configured: `npm start` then runs the local playground. */
  mode: 'demo' | 'real';
  role: 'all' | 'ingress' | 'worker';
  /** Absent only in demo mode, where the composition root starts the emulator. */
  agent?: AgentConfig;
  /**
   * AGENT_ACCOUNT_MODE: `shared` (AGENT_API_KEY for every workspace) or `per-workspace` (each
   * workspace's admin sets its own key with `/agent setup`; kept sealed with `encryptionKey`).
   */
  agentAccountMode: 'shared' | 'per-workspace';
  redis: {
    url: string;
    sentinels: string[];
    sentinelName?: string;
    clusterNodes: string[];
    tlsCaFile?: string;
    /**
     * True when no Redis address is configured (`REDIS_URL`, `REDIS_SENTINELS`,
     * `REDIS_CLUSTER_NODES` all unset), so `url` is the default and `npm start` may run a
     * private redis-server when nothing answers there.
     */
    defaulted: boolean;
  };
  queue: {
    prefix: string;
    concurrency: number;
    attempts: number;
    retryBaseDelayMs: number;
    lockDurationMs: number;
    stalledIntervalMs: number;
    keepCompleted: { age: number; count: number };
    keepFailed: { age: number; count: number };
    /** AGENT_CALL_GUARANTEE: what a message whose call was cut by a crash gets (call again, or a notice). */
    callGuarantee: 'at-least-once' | 'at-most-once';
    /** MAX_REPLY_CHUNKS: a longer reply is cut, its last message saying so. */
    maxReplyChunks: number;
    /** WORKING_INDICATOR_DELAY_MS: how long the agent may take before the working indicator shows (0 = at once). */
    workingIndicatorDelayMs: number;
    /** MAX_PENDING_PER_CHANNEL: unfinished messages a channel may have before new ones are refused (0 = no cap). */
    maxPendingPerChannel: number;
    /** THREAD_FOLLOW_UP_DAYS: how long a thread the bot answered takes follow-ups without a mention. */
    threadFollowUpDays: number;
  };
  http: { host: string; port: number };
  bindings: BindingDefault[];
  maxMessageChars: number;
  /** Largest file attachment sent to the agent, in bytes (0 = files are never sent). */
  maxAttachmentBytes: number;
  logLevel: Env['LOG_LEVEL'];
  quotas: QuotaLimits;
  threadContext: { maxMessages: number; maxChars: number };
  auditMaxEntries: number;
  /** Feedback votes kept per agent instance. */
  feedbackMaxEntries: number;
  shutdownTimeoutMs: number;
  dashboard?: { user: string; password: string };
  playground: { enabled: boolean; token?: string };
  /**
   * Each configured platform's own settings, by platform name, as its module read them
   * (`adapters/<platform>/config.ts`); a platform that is not configured has no entry.
   */
  platforms: Readonly<Record<Platform, unknown>>;
  /** INSTALLATION_ENCRYPTION_KEY's 32 bytes (AES-256-GCM) as base64, when set (a string: the config is deep-frozen). */
  encryptionKey?: string;
  /** Every secret value in this config, for the logger's redaction. */
  secrets: string[];
  /** Settings that run but are likely a mistake, each naming the variable; logged at start-up. */
  warnings: string[];
}

/** Under this, AGENT_TIMEOUT_MS cuts agents that are merely slow (a chat often takes 10 s or more). */
const SHORT_AGENT_TIMEOUT_MS = 5_000;

const FIX: Record<string, string> = {
  AGENT_API_BASE_URL: 'set it to the service base URL including /api/v1, for example https://openhelixai.com/api/v1',
  AGENT_API_KEY: 'set it to an API key generated in the agent service dashboard (sent as X-API-Key)',
  INSTALLATION_ENCRYPTION_KEY: 'set it to 32 random bytes (openssl rand -base64 32); installations and per-workspace agent keys are stored encrypted with it',
  PLAYGROUND_TOKEN: 'set PLAYGROUND_TOKEN to a long random string, or keep HTTP_HOST on 127.0.0.1',
};

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

/** Reads `.env` (if present) under the process environment; the environment wins. */
export function readEnvironment(envFile = '.env', env: NodeJS.ProcessEnv = process.env): Record<string, string | undefined> {
  let fromFile: Record<string, string> = {};
  try {
    fromFile = parseDotenv(readFileSync(envFile));
  } catch {
    // No .env: the environment alone configures the process.
  }
  return { ...fromFile, ...env };
}

/** The process's PATH, where `npm start` looks for `redis-server` (not a setting of ours). */
export function executableSearchPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.PATH ?? '';
}

/**
 * Validates the environment once and returns a frozen, typed config, or throws ConfigError.
 * `platforms`: the settings modules of the platforms this process may run (the entry point's
 * list); each reads its own variables, and its problems are reported with the core's.
 */
export function loadConfig(platforms: readonly PlatformSettings[], raw: RawEnv = readEnvironment()): Readonly<Config> {
  // Every problem in one pass: a wrong value is reported, then left out (its default stands
  // in) so the checks that combine settings still run and report theirs too.
  const problems: string[] = [];
  let parsed = envSchema.safeParse(raw);
  if (!parsed.success) {
    const wrong = new Set<string>();
    for (const i of parsed.error.issues) {
      const name = String(i.path[0] ?? 'environment');
      wrong.add(name);
      problems.push(i.message.startsWith(name) ? i.message : `${name}: ${i.message}`);
    }
    parsed = envSchema.safeParse(Object.fromEntries(Object.entries(raw).filter(([k]) => !wrong.has(k))));
    if (!parsed.success) throw new ConfigError(problems);
  }
  const e = parsed.data;
  problems.push(
    ...pastedSecretProblems([
      ['AGENT_API_KEY', e.AGENT_API_KEY, { sentAs: 'the X-API-Key header' }],
      ['AGENT_SESSION_TOKEN', e.AGENT_SESSION_TOKEN, { sentAs: 'Authorization: Bearer <token>, adding "Bearer " itself' }],
      ['AGENT_SESSION_COOKIE', e.AGENT_SESSION_COOKIE, { kind: 'cookie', sentAs: 'the Cookie header, for example session=abc' }],
    ]),
  );
  const missing = (name: string, why: string) => problems.push(`${name} is missing (${why}): ${FIX[name] ?? 'set it'}`);

  // A platform's settings without its token, in a process that runs no platform: it was meant
  // to run (the token is missing or misspelt), not the demo or the playground alone. Beside a
  // running platform they may be another process's, from an environment the processes share.
  const running = platforms.some((p) => p.present(raw));
  const withoutToken = running ? [] : platforms.flatMap((p) => p.givenWithoutToken?.(raw) ?? []);
  problems.push(...withoutToken);
  const platformConfigured = running || withoutToken.length > 0;
  const mode = platformConfigured || e.AGENT_API_BASE_URL || e.AGENT_API_KEY ? 'real' : 'demo';

  let agent: AgentConfig | undefined;
  if (mode === 'real') {
    // A wrong value was reported above (and left out); only an absent one is "missing".
    if (!e.AGENT_API_BASE_URL && !raw.AGENT_API_BASE_URL?.trim()) missing('AGENT_API_BASE_URL', 'a platform or agent setting is present, so the demo is off');
    if (e.AGENT_ACCOUNT_MODE === 'per-workspace') {
      if (!e.INSTALLATION_ENCRYPTION_KEY) missing('INSTALLATION_ENCRYPTION_KEY', 'AGENT_ACCOUNT_MODE=per-workspace, and each workspace\'s agent key is stored encrypted with it');
      // One key for everyone would bill the operator for workspaces that never set theirs up.
      if (e.AGENT_API_KEY) problems.push('AGENT_API_KEY and AGENT_ACCOUNT_MODE=per-workspace exclude each other: remove AGENT_API_KEY (each workspace\'s admin sets its own key with /agent setup), or use AGENT_ACCOUNT_MODE=shared');
    } else if (!e.AGENT_API_KEY && e.ROLE !== 'ingress') missing('AGENT_API_KEY', 'workers need it for every chat call');
    if (e.AGENT_API_BASE_URL) {
      agent = {
        baseUrl: e.AGENT_API_BASE_URL.replace(/\/+$/, ''),
        apiKey: e.AGENT_API_KEY,
        sessionCookie: e.AGENT_SESSION_COOKIE,
        sessionToken: e.AGENT_SESSION_TOKEN,
        timeoutMs: e.AGENT_TIMEOUT_MS,
        otherTimeoutMs: 15_000,
        maxResponseBytes: e.AGENT_MAX_RESPONSE_BYTES,
      };
    }
  }

  const playgroundExplicit = raw.PLAYGROUND !== undefined && raw.PLAYGROUND.trim() !== '';
  const playgroundEnabled = playgroundExplicit ? e.PLAYGROUND : !platformConfigured;
  const platformSettings: Record<Platform, unknown> = {};
  const platformSecrets: string[] = [];
  for (const p of platforms) {
    const read = p.load(raw, { role: e.ROLE, encryptionKeySet: Boolean(e.INSTALLATION_ENCRYPTION_KEY), playground: playgroundEnabled || mode === 'demo' });
    problems.push(...read.problems);
    platformSecrets.push(...read.secrets);
    if (read.settings !== undefined) platformSettings[p.platform] = read.settings;
  }

  if (playgroundEnabled && !isLoopback(e.HTTP_HOST) && !e.PLAYGROUND_TOKEN && e.ROLE !== 'worker') {
    problems.push(`PLAYGROUND_TOKEN is missing (HTTP_HOST=${e.HTTP_HOST} exposes the playground): ${FIX.PLAYGROUND_TOKEN}`);
  }

  if ((e.ADMIN_USER && !e.ADMIN_PASSWORD) || (!e.ADMIN_USER && e.ADMIN_PASSWORD)) {
    problems.push('ADMIN_USER and ADMIN_PASSWORD go together: set both to turn on the queue dashboard, or neither');
  }

  let bindings: BindingDefault[] = [];
  try {
    bindings = parseBindingDefaults(e.BINDINGS, platforms.map((p) => p.platform));
  } catch (err) {
    problems.push((err as Error).message);
  }
  for (const b of bindings) {
    const problem = b.channelId === 'dm' ? undefined : platforms.find((p) => p.platform === b.platform)?.bindingChannelProblem?.(b.channelId);
    if (problem) problems.push(`BINDINGS entry "${b.platform}:${b.channelId.slice(0, 80)}=…": ${problem}`);
  }

  if (e.REDIS_SENTINELS.length > 0 && !e.REDIS_SENTINEL_NAME) {
    problems.push('REDIS_SENTINEL_NAME is missing (REDIS_SENTINELS is set): set it to the master group name, for example mymaster');
  }

  if (!problems.some((p) => p.startsWith('REDIS_'))) {
    problems.push(
      ...redisSettingProblems({
        url: e.REDIS_URL,
        sentinels: e.REDIS_SENTINELS,
        clusterNodes: e.REDIS_CLUSTER_NODES,
        tlsCaFile: e.REDIS_TLS_CA_FILE,
      }),
    );
  }

  if (problems.length > 0) throw new ConfigError(problems);

  const warnings: string[] = [];
  if (agent && agent.timeoutMs < SHORT_AGENT_TIMEOUT_MS) {
    warnings.push(
      `AGENT_TIMEOUT_MS is ${agent.timeoutMs} (under ${SHORT_AGENT_TIMEOUT_MS / 1000} seconds): agents often take longer, and a message whose call is cut off is billed while its sender gets no answer. Leave it unset (120000, 2 minutes) unless the agent service is known to answer faster`,
    );
  }

  const secrets = [
    e.AGENT_API_KEY,
    e.AGENT_SESSION_COOKIE,
    e.AGENT_SESSION_TOKEN,
    ...platformSecrets,
    e.INSTALLATION_ENCRYPTION_KEY,
    e.ADMIN_PASSWORD,
    e.PLAYGROUND_TOKEN,
    ...urlSettingSecrets(raw),
  ].filter((s): s is string => typeof s === 'string' && s.length >= 4);

  const redisDefaulted = !raw.REDIS_URL?.trim() && e.REDIS_SENTINELS.length === 0 && e.REDIS_CLUSTER_NODES.length === 0;
  const config: Config = {
    mode,
    agentAccountMode: mode === 'real' ? e.AGENT_ACCOUNT_MODE : 'shared',
    role: e.ROLE,
    agent,
    redis: {
      url: redisDefaulted ? defaultRedisUrl(raw) : e.REDIS_URL,
      sentinels: e.REDIS_SENTINELS,
      sentinelName: e.REDIS_SENTINEL_NAME,
      clusterNodes: e.REDIS_CLUSTER_NODES,
      tlsCaFile: e.REDIS_TLS_CA_FILE,
      defaulted: redisDefaulted,
    },
    queue: {
      prefix: e.QUEUE_PREFIX,
      concurrency: e.WORKER_CONCURRENCY,
      attempts: e.JOB_ATTEMPTS,
      retryBaseDelayMs: e.RETRY_BASE_DELAY_MS,
      lockDurationMs: e.WORKER_LOCK_DURATION_MS,
      stalledIntervalMs: e.WORKER_STALLED_INTERVAL_MS,
      keepCompleted: { age: e.KEEP_COMPLETED_SECONDS, count: e.KEEP_COMPLETED_COUNT },
      keepFailed: { age: e.KEEP_FAILED_SECONDS, count: e.KEEP_FAILED_COUNT },
      callGuarantee: e.AGENT_CALL_GUARANTEE,
      maxReplyChunks: e.MAX_REPLY_CHUNKS,
      workingIndicatorDelayMs: e.WORKING_INDICATOR_DELAY_MS,
      maxPendingPerChannel: e.MAX_PENDING_PER_CHANNEL,
      threadFollowUpDays: e.THREAD_FOLLOW_UP_DAYS,
    },
    http: { host: e.HTTP_HOST, port: e.HTTP_PORT },
    bindings,
    maxMessageChars: e.MAX_MESSAGE_CHARS,
    maxAttachmentBytes: e.MAX_ATTACHMENT_BYTES,
    logLevel: e.LOG_LEVEL,
    quotas: {
      userPerMinute: e.QUOTA_USER_PER_MINUTE,
      userPerDay: e.QUOTA_USER_PER_DAY,
      channelPerMinute: e.QUOTA_CHANNEL_PER_MINUTE,
      channelPerDay: e.QUOTA_CHANNEL_PER_DAY,
    },
    threadContext: { maxMessages: e.THREAD_CONTEXT_MAX_MESSAGES, maxChars: e.THREAD_CONTEXT_MAX_CHARS },
    auditMaxEntries: e.AUDIT_MAX_ENTRIES,
    feedbackMaxEntries: e.FEEDBACK_MAX_ENTRIES,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    dashboard: e.ADMIN_USER && e.ADMIN_PASSWORD ? { user: e.ADMIN_USER, password: e.ADMIN_PASSWORD } : undefined,
    playground: { enabled: playgroundEnabled, token: e.PLAYGROUND_TOKEN },
    platforms: platformSettings,
    ...(e.INSTALLATION_ENCRYPTION_KEY ? { encryptionKey: encryptionKeyBytes(e.INSTALLATION_ENCRYPTION_KEY)!.toString('base64') } : {}),
    secrets,
    warnings,
  };
  return deepFreeze(config);
}

/**
 * Where to look for Redis when `REDIS_URL` is unset: 127.0.0.1:6379. For tests only,
 * `AGENT_BRIDGE_DEFAULT_REDIS_URL` moves that default (so a test can see "nothing answers"
 * without stopping the shared Redis); it is not an operator setting and not in the schema.
 */
function defaultRedisUrl(raw: Record<string, string | undefined>): string {
  const override = raw.AGENT_BRIDGE_DEFAULT_REDIS_URL?.trim();
  return override && /^redis:\/\/127\.0\.0\.1:\d+$/.test(override) ? override : 'redis://127.0.0.1:6379';
}

/**
 * The passwords written in URL settings (every `*_URL`: REDIS_URL, AGENT_API_BASE_URL, a
 * platform's API URL...), so that no log line, error or chat text shows them whatever carries
 * the URL there.
 */
function urlSettingSecrets(raw: RawEnv): string[] {
  return Object.entries(raw)
    .filter(([name]) => name.endsWith('_URL'))
    .flatMap(([, value]) => userinfoSecrets(value?.trim()));
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
