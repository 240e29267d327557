import type { SlackConfig } from './config.js';
import { PlatformError } from '../../src/core/errors.js';
import { errorFields } from '../../src/logger.js';
import type { Logger } from '../../src/logger.js';
import type { SlackUserInfo, UserDirectory } from './user-directory.js';
import { withTimeout } from '../../src/core/with-timeout.js';

/** What Slack says of a user's admin rights; `unknown` when it would not say just now (429, 5xx, unreachable). */
export type AdminRights = 'admin' | 'not_admin' | 'unknown';

/** The workspace (and Enterprise Grid organisation) a command or form was used in. */
export interface AdminPlace {
  teamId?: string;
  enterpriseId?: string;
}

/** `fresh`: ask Slack again rather than trust a cached answer (a form sent after a demotion). */
export interface AdminCheckOptions {
  fresh?: boolean;
}

/** Whether a user may run admin commands (no when Slack cannot say), and the three-way answer. */
export interface AdminCheck {
  (userId: string, place?: AdminPlace, options?: AdminCheckOptions): Promise<boolean>;
  rights(userId: string, place?: AdminPlace, options?: AdminCheckOptions): Promise<AdminRights>;
}

/** Failures of users.info that asking again shortly can fix. */
const PASSING = new Set(['rate_limited', 'server_error', 'network', 'timeout']);

/**
 * Slack's admin flags are of the user's own workspace: a Slack Connect member from another
 * organisation may be an admin there, never here. Same workspace, or (Enterprise Grid) the
 * same organisation; a place or user without IDs is not compared.
 */
function ofThisWorkspace(user: SlackUserInfo, place: AdminPlace | undefined): boolean {
  if (!place?.teamId || !user.teamId) return true;
  if (user.teamId === place.teamId) return true;
  return Boolean(place.enterpriseId && user.enterpriseId === place.enterpriseId);
}

/**
 * Who may run `/agent` commands other than `help`: the IDs in SLACK_ADMIN_USER_IDS, and the
 * workspace's admins and owners (per users.info) unless SLACK_WORKSPACE_ADMINS=false; never a
 * deactivated member or a guest, nor a member of another organisation (Slack Connect), whatever
 * their rights there. When Slack cannot say, the answer is no: a refused admin can retry, an
 * outsider must never pass. `rights` tells that case apart (`unknown`), so the refusal can say
 * so and is not audited as a non-admin's attempt.
 */
export function createAdminCheck(slack: Pick<SlackConfig, 'adminUserIds' | 'workspaceAdmins'>, users: UserDirectory, logger: Logger): AdminCheck {
  const listed = new Set(slack.adminUserIds);
  async function rights(userId: string, place?: AdminPlace, options?: AdminCheckOptions): Promise<AdminRights> {
    if (listed.has(userId)) return 'admin';
    if (!slack.workspaceAdmins) return 'not_admin';
    try {
      const user = await users.get(userId, options?.fresh ? { fresh: true } : undefined);
      return user.isAdmin && !user.deleted && !user.guest && ofThisWorkspace(user, place) ? 'admin' : 'not_admin';
    } catch (err) {
      logger.warn({ userId, ...errorFields(err) }, 'could not check Slack admin rights; treating the user as not an admin');
      return err instanceof PlatformError && PASSING.has(err.kind) ? 'unknown' : 'not_admin';
    }
  }
  const isAdmin = async (userId: string, place?: AdminPlace, options?: AdminCheckOptions): Promise<boolean> => (await rights(userId, place, options)) === 'admin';
  return Object.assign(isAdmin, { rights });
}

/** What a form's handler is given: the boolean check, with `rights` when it can tell "Slack would not say". */
export type FormAdminCheck = ((userId: string, place?: AdminPlace, options?: AdminCheckOptions) => Promise<boolean>) & {
  rights?(userId: string, place?: AdminPlace, options?: AdminCheckOptions): Promise<AdminRights>;
};

/** Time a form's submission gives users.info, inside Slack's 3 s for the whole answer. */
const FORM_CHECK_MS = 1_500;

/**
 * The rights of whoever sent a form, asked afresh (an admin demoted since it opened is refused)
 * and within the time Slack leaves: a check Slack did not answer in time is `unknown`, not a refusal.
 */
export async function submitterRights(check: FormAdminCheck, userId: string, place: AdminPlace, ms = FORM_CHECK_MS): Promise<AdminRights> {
  const asked = check.rights ? check.rights(userId, place, { fresh: true }) : check(userId, place, { fresh: true }).then((ok): AdminRights => (ok ? 'admin' : 'not_admin'));
  return withTimeout(asked, ms, (): AdminRights => 'unknown');
}

/** A form's words when Slack did not say whether its sender is an admin: nothing is refused or audited. */
export const CHECK_AGAIN = "Slack didn't let me check your admin rights just now. Press Save again in a moment.";
