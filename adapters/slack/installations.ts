import type { Installation, InstallationQuery, InstallationStore } from '@slack/bolt';
import type { Redis } from 'ioredis';
import type { SealedBox } from '../../src/crypto/sealed-box.js';
import { errorFields, type Logger } from '../../src/logger.js';
import { createRefreshLock, type RefreshLockOptions } from './refresh-lock.js';
import { withTimeout } from '../../src/core/with-timeout.js';

/**
 * Where "Add to Slack" keeps installations: one Redis string per installation, sealed with
 * INSTALLATION_ENCRYPTION_KEY (tokens and refresh tokens never rest in clear). An org-wide
 * Enterprise Grid install is kept under its enterprise ID and answers for every workspace of
 * the org; any other under its team ID. Every change is published, so workers drop the token
 * they cached for it. A token due a refresh is handed to one reader at a time across processes
 * (refresh-lock.ts): the others wait for its refreshed save.
 */
export interface SlackInstallations extends InstallationStore {
  /** The Redis pub/sub channel that carries installation keys whose token changed or went away. */
  readonly changes: string;
  deleteInstallation(query: InstallationQuery<boolean>): Promise<void>;
  /** Runs one InstallProvider `authorize` (see `RefreshLock.authorizing`). */
  authorizing<T>(authorize: () => Promise<T>): Promise<T>;
}

/** `enterprise:E…` for an org-wide install, else `team:T…`: the key of one installation. */
export function installationKey(q: { teamId?: string | undefined; enterpriseId?: string | undefined; isEnterpriseInstall?: boolean | undefined }): string {
  if (q.isEnterpriseInstall && q.enterpriseId) return `enterprise:${q.enterpriseId}`;
  if (q.teamId) return `team:${q.teamId}`;
  throw new Error('an installation needs a team or an enterprise ID');
}

/**
 * `onSecret` hears every token an installation holds (when saved or read), so the logger's
 * redaction knows tokens that never were in the environment.
 */
export function createSlackInstallations(
  redis: Redis,
  prefix: string,
  box: SealedBox,
  logger: Logger,
  onSecret: (value: string) => (() => void) | void = () => {},
  refreshLock: RefreshLockOptions = {},
  /** How long a request waits for Redis before the installation read before stands in. */
  readWaitMs = 1_500,
): SlackInstallations {
  const keyOf = (k: string) => `${prefix}:slack:installation:${k}`;
  const changes = `${prefix}:slack:installation-changes`;
  const refreshLockOf = (k: string) => `${prefix}:slack:installation-refresh:${k}`;
  const refreshes = createRefreshLock(redis, refreshLock);

  const storeKey = (i: Installation) =>
    installationKey({ teamId: i.team?.id, enterpriseId: i.enterprise?.id, isEnterpriseInstall: i.isEnterpriseInstall === true });

  // Only the tokens an installation holds now are known (a rotated one is forgotten): the
  // redaction pattern changes only when a token does, not on every read.
  const known = new Map<string, { values: string; forget: Array<() => void> }>();
  const learn = (i: Installation) => {
    const k = storeKey(i);
    const values = [i.bot?.token, i.bot?.refreshToken, i.user?.token, i.user?.refreshToken].filter((v): v is string => Boolean(v));
    if (known.get(k)?.values === values.join(' ')) return i;
    for (const f of known.get(k)?.forget ?? []) f();
    known.set(k, { values: values.join(' '), forget: values.map((v) => onSecret(v) ?? (() => {})) });
    return i;
  };

  // The last installation read per key (in memory, as the tokens Bolt holds for a request are).
  const lastRead = new Map<string, Installation>();
  const usable = (i: Installation) => {
    const expiresAt = i.bot?.expiresAt;
    return typeof expiresAt !== 'number' || expiresAt * 1000 - Date.now() > 5 * 60_000;
  };

  return {
    changes,
    authorizing: (authorize) => refreshes.authorizing(authorize),
    async storeInstallation(installation) {
      const k = storeKey(learn(installation));
      await redis.set(keyOf(k), box.seal(JSON.stringify(installation), keyOf(k)));
      lastRead.set(k, installation);
      await redis.publish(changes, k);
      // Saved after a refresh (or a reinstall): readers waiting for it may go on.
      await refreshes.saved(refreshLockOf(k)).catch((err: unknown) =>
        // Not fatal: the lock lapses on its own, and the readers waiting for it go on then.
        logger.warn({ installation: k, ...errorFields(err) }, 'Slack installation saved, but its refresh lock could not be released'),
      );
      logger.info({ installation: k, enterprise: installation.isEnterpriseInstall === true }, 'Slack installation saved');
    },
    async fetchInstallation(query: InstallationQuery<boolean>) {
      const k = installationKey(query);
      const read = async () => {
        const sealed = await redis.get(keyOf(k));
        if (!sealed) throw new Error(`no Slack installation for ${k}`);
        return learn(JSON.parse(box.open(sealed, keyOf(k))) as Installation);
      };
      const fresh = refreshes.read(refreshLockOf(k), read).then((i) => {
        lastRead.set(k, i);
        return i;
      });
      // Every request is authorized before its listener acks: a Redis that does not answer must
      // not make Slack's 3 s run out (`/agent` would fail with operation_timeout). The copy this
      // process read last stands in, unless its token is near expiry (then only Redis will do).
      const kept = lastRead.get(k);
      if (!kept || !usable(kept)) return fresh;
      return withTimeout(fresh, readWaitMs, () => {
        logger.warn({ installation: k }, 'Redis did not give the Slack installation in time; using the copy read before');
        return kept;
      });
    },
    async deleteInstallation(query: InstallationQuery<boolean>) {
      const k = installationKey(query);
      lastRead.delete(k);
      await redis.del(keyOf(k));
      await redis.publish(changes, k);
      logger.info({ installation: k }, 'Slack installation removed');
    },
  };
}
