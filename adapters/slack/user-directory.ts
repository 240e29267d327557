import type { WebClient } from '@slack/web-api';
import { toPlatformError } from './errors.js';

export interface SlackUserInfo {
  id: string;
  /** Display name, else real name, else handle. */
  name: string;
  /** Workspace admin, owner or primary owner (of the user's own workspace: see `teamId`). */
  isAdmin: boolean;
  isBot: boolean;
  /** The user's own workspace (`team_id`): another organisation's for a Slack Connect member. */
  teamId?: string;
  /** Enterprise Grid: the user's organisation (`enterprise_user.enterprise_id`). */
  enterpriseId?: string;
  /** Deactivated (`deleted`). */
  deleted: boolean;
  /** A guest (`is_restricted` or `is_ultra_restricted`). */
  guest: boolean;
}

export interface UserDirectory {
  /**
   * `users.info`, cached for `ttlMs` (`fresh`: asked again, for a decision that must not rest
   * on a minute-old answer). Throws PlatformError when Slack cannot answer.
   */
  get(userId: string, options?: { fresh?: boolean }): Promise<SlackUserInfo>;
}

/** A small users.info cache: admin checks and thread speaker names would otherwise call it per message. */
export function createUserDirectory(client: WebClient, ttlMs = 60_000, maxEntries = 1_000): UserDirectory {
  const cache = new Map<string, { at: number; user: Promise<SlackUserInfo> }>();
  return {
    get(userId: string, options?: { fresh?: boolean }) {
      const now = Date.now();
      const hit = cache.get(userId);
      if (hit && now - hit.at < ttlMs && !options?.fresh) return hit.user;
      const user = client.users.info({ user: userId }).then(
        (res) => {
          const u = (res.user ?? {}) as Record<string, any>;
          const profile = (u.profile ?? {}) as Record<string, unknown>;
          const name = [profile.display_name, profile.real_name, u.real_name, u.name].find((n) => typeof n === 'string' && n.trim());
          return {
            id: userId,
            name: typeof name === 'string' ? name.trim().slice(0, 80) : userId,
            isAdmin: u.is_admin === true || u.is_owner === true || u.is_primary_owner === true,
            isBot: u.is_bot === true,
            ...(typeof u.team_id === 'string' && u.team_id ? { teamId: u.team_id } : {}),
            ...(typeof u.enterprise_user?.enterprise_id === 'string' && u.enterprise_user.enterprise_id ? { enterpriseId: u.enterprise_user.enterprise_id } : {}),
            deleted: u.deleted === true,
            guest: u.is_restricted === true || u.is_ultra_restricted === true,
          };
        },
        (err: unknown) => {
          cache.delete(userId);
          throw toPlatformError('users.info', err);
        },
      );
      if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
      cache.set(userId, { at: now, user });
      return user;
    },
  };
}
