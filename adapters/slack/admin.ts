import type { SlackConfig } from './config.js';
import { PlatformError } from '../../src/core/errors.js';
import { errorFields } from '../../src/logger.js';
import type { Logger } from '../../src/logger.js';
import type { UserDirectory } from './user-directory.js';

/** What Slack says of a user's admin rights; `unknown` when it would not say just now (429, 5xx, unreachable). */
export type AdminRights = 'admin' | 'not_admin' | 'unknown';

/** Whether a user may run admin commands (no when Slack cannot say), and the three-way answer. */
export interface AdminCheck {
  (userId: string): Promise<boolean>;
  rights(userId: string): Promise<AdminRights>;
}

/** Failures of users.info that asking again shortly can fix. */
const PASSING = new Set(['rate_limited', 'server_error', 'network', 'timeout']);

/**
 * Who may run `/agent` commands other than `help`: the IDs in SLACK_ADMIN_USER_IDS, and the
 * workspace's admins and owners (per users.info) unless SLACK_WORKSPACE_ADMINS=false. When
 * Slack cannot say, the answer is no: a refused admin can retry, an outsider must never pass.
 * `rights` tells that case apart (`unknown`), so the refusal can say so and is not audited as
 * a non-admin's attempt.
 */
export function createAdminCheck(slack: Pick<SlackConfig, 'adminUserIds' | 'workspaceAdmins'>, users: UserDirectory, logger: Logger): AdminCheck {
  const listed = new Set(slack.adminUserIds);
  async function rights(userId: string): Promise<AdminRights> {
    if (listed.has(userId)) return 'admin';
    if (!slack.workspaceAdmins) return 'not_admin';
    try {
      return (await users.get(userId)).isAdmin ? 'admin' : 'not_admin';
    } catch (err) {
      logger.warn({ userId, ...errorFields(err) }, 'could not check Slack admin rights; treating the user as not an admin');
      return err instanceof PlatformError && PASSING.has(err.kind) ? 'unknown' : 'not_admin';
    }
  }
  const isAdmin = async (userId: string): Promise<boolean> => (await rights(userId)) === 'admin';
  return Object.assign(isAdmin, { rights });
}
