import type { ReplyPort } from '../../src/core/reply-port.js';
import { slackConfigOf } from './config.js';
import type { ReplyTarget } from '../../src/core/message.js';
import type { ReplyPortDeps } from '../../src/core/platform-context.js';
import { createSealedBox } from '../../src/crypto/sealed-box.js';
import { bullPrefix } from '../../src/redis.js';
import { PlatformError } from '../../src/core/errors.js';
import { isRedisConnectionError } from '../../src/redis-errors.js';
import { createBoltLogger } from './bolt-logger.js';
import { createInstallationTokens, createInstallProvider, type InstallationTokens } from './installation-tokens.js';
import { createSlackInstallations } from './installations.js';
import { renderSlackReply } from './render.js';
import { createWebClient } from './web-client.js';

/**
 * The Slack reply port with "Add to Slack": each reply goes out with the bot token of the
 * installation named in its target (`ReplyTarget.installation`, set by the ingress). One
 * ordinary Slack reply port per token, built on first use and dropped when the installation
 * changes (uninstall, reinstall, token refresh).
 */
export interface InstallationPortLimits {
  /** Ports kept; past it the least recently used idle ones are dropped. @defaultValue 1000 */
  max?: number;
  /** How long unused a port must be to be dropped. @defaultValue 10 minutes, or twice AGENT_TIMEOUT_MS if longer */
  idleMs?: number;
}

/** The multi-workspace port, with the count of installations' ports it holds (observability and tests). */
export type MultiWorkspaceReplyPort = ReplyPort & { installationPorts(): number };

export function createMultiWorkspaceReplyPort(
  deps: ReplyPortDeps,
  single: (deps: ReplyPortDeps, client: ReturnType<typeof createWebClient>) => ReplyPort,
  limits: InstallationPortLimits = {},
): MultiWorkspaceReplyPort {
  const slack = slackConfigOf(deps.config)!;
  const oauth = slack.oauth!;
  if (!deps.config.encryptionKey) throw new Error('INSTALLATION_ENCRYPTION_KEY is missing: Slack installations are stored encrypted');
  const logger = deps.logger.child({ platform: 'slack' });
  const store = createSlackInstallations(deps.redis, bullPrefix(deps.config), createSealedBox(deps.config.encryptionKey), logger, (t) =>
    deps.secrets?.add(t),
  );
  const provider = createInstallProvider(oauth, store, slack.apiUrl, logger);
  // Least recently used first. A worker that runs for weeks answers, in time, every workspace
  // that ever installed the app: each port holds a WebClient (about 26 KB) and caches of its own,
  // so idle ones are dropped past `max`. Only idle ones: a port still refreshing an assistant
  // thread's status (for at most AGENT_TIMEOUT_MS) must not be replaced by one that does not know it.
  const ports = new Map<string, { token: string; port: ReplyPort; usedAt: number }>();
  const maxPorts = limits.max ?? 1_000;
  const idleMs = limits.idleMs ?? Math.max(10 * 60_000, 2 * (deps.config.agent?.timeoutMs ?? 0));
  const dropIdle = (now: number) => {
    for (const [installation, entry] of ports) {
      if (ports.size <= maxPorts || now - entry.usedAt < idleMs) return;
      ports.delete(installation);
    }
  };

  let tokens: Promise<InstallationTokens> | undefined;
  const tokenFeed = () => {
    tokens ??= createInstallationTokens(deps.redis, provider, store, logger).then((t) => {
      t.onChange((installation) => ports.delete(installation));
      deps.redis.once('end', () => void t.close());
      return t;
    });
    return tokens;
  };

  const portFor = async (target: ReplyTarget): Promise<ReplyPort> => {
    const installation = target.installation;
    if (!installation) throw new Error('a Slack reply without its installation (the ingress sets it in multi-workspace mode)');
    const token = await (await tokenFeed()).tokenFor(installation).catch((err: unknown) => {
      if (isRedisConnectionError(err)) throw err;
      // Uninstalled (or never installed): nothing to answer with, and retrying cannot help.
      throw new PlatformError('slack', 'refused', `no Slack installation for ${installation}`, { code: 'not_installed', cause: err });
    });
    const now = Date.now();
    const known = ports.get(installation);
    ports.delete(installation);
    if (known && known.token === token) {
      ports.set(installation, { ...known, usedAt: now });
      return known.port;
    }
    const port = single(deps, createWebClient(token, { apiUrl: slack.apiUrl, logger: createBoltLogger(logger) }));
    ports.set(installation, { token, port, usedAt: now });
    dropIdle(now);
    return port;
  };

  return {
    platform: 'slack',
    render: (markdown) => renderSlackReply(markdown),
    postChunk: async (target, chunk, index, info) => (await portFor(target)).postChunk(target, chunk, index, info),
    postNotice: async (target, text, info) => (await portFor(target)).postNotice(target, text, info),
    ready: async (target) => (await portFor(target)).ready?.(target),
    startWorking: async (target) => (await portFor(target)).startWorking?.(target),
    stopWorking: async (target, outcome) => (await portFor(target)).stopWorking?.(target, outcome),
    fetchThread: async (target, limit) => (await (await portFor(target)).fetchThread?.(target, limit)) ?? [],
    nameOf: async (target, userId) => (await portFor(target)).nameOf?.(target, userId),
    installationPorts: () => ports.size,
  };
}
