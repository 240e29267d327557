import type { SlackConfig } from './config.js';
import { errorFields } from '../../src/logger.js';
import type { Logger } from '../../src/logger.js';
import type { UserDirectory } from './user-directory.js';

/**
 * Who may run `/agent` commands other than `help`: the IDs in SLACK_ADMIN_USER_IDS, and the
 * workspace's admins and owners (per users.info) unless SLACK_WORKSPACE_ADMINS=false. When
 * Slack cannot say, the answer is no: a refused admin can retry, an outsider must never pass.
 */
export function createAdminCheck(slack: Pick<SlackConfig, 'adminUserIds' | 'workspaceAdmins'>, users: UserDirectory, logger: Logger) {
  const listed = new Set(slack.adminUserIds);
  return async function isAdmin(userId: string): Promise<boolean> {
    if (listed.has(userId)) return true;
    if (!slack.workspaceAdmins) return false;
    try {
      return (await users.get(userId)).isAdmin;
    } catch (err) {
      logger.warn({ userId, ...errorFields(err) }, 'could not check Slack admin rights; treating the user as not an admin');
      return false;
    }
  };
}
