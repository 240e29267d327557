import { InstallProvider } from '@slack/oauth';
import { errorFields } from '../../src/logger.js';
import type { Redis } from 'ioredis';
import type { SlackOAuthConfig } from './config.js';
import type { Logger } from '../../src/logger.js';
import type { SlackInstallations } from './installations.js';
import { slackApiUrl } from './web-client.js';

/**
 * The bot token of one installation, for workers. Bolt's InstallProvider reads the sealed
 * installation and, when the token rotates (refresh tokens) and expires within two hours,
 * refreshes and saves it. Tokens are cached per installation until then, or until the
 * installation changes anywhere (Redis pub/sub from the store).
 */
export interface InstallationTokens {
  tokenFor(installation: string): Promise<string>;
  /** Runs `listener` whenever an installation's token may have changed. */
  onChange(listener: (installation: string) => void): void;
  close(): Promise<void>;
}

/**
 * Runs each `authorize` of `provider` through the store's refresh lock: a lock taken by a refresh
 * that failed (so nothing was saved) is released when that `authorize` ends, rather than left to
 * lapse while every other reader of the installation waits (Bolt authorizes an event before it
 * acks it, and Slack waits 3 s for the ack).
 */
export function authorizeWithRefreshLock(provider: InstallProvider, store: SlackInstallations): InstallProvider {
  const authorize = provider.authorize.bind(provider);
  provider.authorize = (source) => store.authorizing(() => authorize(source));
  return provider;
}

/** The InstallProvider for this config: the same one serves the install pages and `authorize`. */
export function createInstallProvider(oauth: SlackOAuthConfig, store: SlackInstallations, apiUrl: string | undefined, logger: Logger) {
  const provider = new InstallProvider({
    clientId: oauth.clientId,
    clientSecret: oauth.clientSecret,
    stateSecret: oauth.stateSecret,
    installationStore: store,
    clientOptions: { slackApiUrl: slackApiUrl(apiUrl) },
    logger: {
      debug: () => {},
      info: () => {},
      warn: (...m: unknown[]) => logger.warn(m.map(String).join(' ')),
      error: (...m: unknown[]) => logger.error(m.map(String).join(' ')),
      setLevel: () => {},
      getLevel: () => 'warn' as never,
      setName: () => {},
    },
  });
  return authorizeWithRefreshLock(provider, store);
}

/** `team:T…` / `enterprise:E…` back into Bolt's installation query. */
function queryOf(installation: string) {
  const [kind, id] = installation.split(':');
  if (kind === 'enterprise' && id) return { enterpriseId: id, teamId: undefined, isEnterpriseInstall: true } as const;
  if (kind === 'team' && id) return { teamId: id, enterpriseId: undefined, isEnterpriseInstall: false } as const;
  throw new Error(`not an installation key: ${installation}`);
}

export async function createInstallationTokens(redis: Redis, provider: InstallProvider, store: SlackInstallations, logger: Logger): Promise<InstallationTokens> {
  const cache = new Map<string, { token: string; until: number }>();
  const listeners: Array<(installation: string) => void> = [];
  const subscriber = redis.duplicate();
  subscriber.on('error', (err: Error) => logger.warn({ ...errorFields(err) }, 'Slack installation change feed: Redis error'));
  subscriber.on('message', (_channel: string, installation: string) => {
    cache.delete(installation);
    for (const l of listeners) l(installation);
  });
  await subscriber.subscribe(store.changes);
  // A change missed while the feed was reconnecting could leave a stale token: forget them all.
  subscriber.on('ready', () => cache.clear());

  return {
    async tokenFor(installation) {
      const hit = cache.get(installation);
      if (hit && hit.until > Date.now()) return hit.token;
      const auth = await provider.authorize(queryOf(installation));
      if (!auth.botToken) throw new Error(`the Slack installation ${installation} has no bot token`);
      // InstallProvider refreshes a rotating token two hours before it expires: ask again then.
      const until = auth.botTokenExpiresAt ? auth.botTokenExpiresAt * 1000 - 2 * 3_600_000 : Number.POSITIVE_INFINITY;
      cache.set(installation, { token: auth.botToken, until });
      return auth.botToken;
    },
    onChange: (listener) => void listeners.push(listener),
    async close() {
      await subscriber.quit().catch(() => subscriber.disconnect());
    },
  };
}
