import type { AnyMiddlewareArgs, Middleware } from '@slack/bolt';
import type { Logger } from '../../src/logger.js';
import { oncePer } from '../../src/core/once-per.js';

/** Events that lead to an agent call (and a reply that needs the bot token). */
const ANSWERED_EVENTS: ReadonlySet<string> = new Set(['message', 'app_mention', 'assistant_thread_started', 'assistant_thread_context_changed']);

/** How often one workspace's expired token is named in the log. */
const WARN_EVERY_MS = 10 * 60_000;

/**
 * "Add to Slack" with rotating tokens. When Slack refuses the refresh (a refresh token restored
 * from an old backup, lost in a crash right after Slack rotated it), Slack's installer carries
 * on with the expired token, so a message would be billed at the agent and its answer could
 * never be posted. Such events are dropped with an error that names the workspace and the fix
 * (reinstall); uninstall and revoke events still go through.
 */
export function dropAnswersWithExpiredToken(logger: Logger, now: () => number = Date.now): Middleware<AnyMiddlewareArgs> {
  const firstInWindow = oncePer(WARN_EVERY_MS, now);
  return async ({ body, context, next }) => {
    const expiresAt = (context as { botTokenExpiresAt?: unknown }).botTokenExpiresAt;
    const event = (body as { type?: unknown; event?: { type?: unknown } }).event;
    const answered = (body as { type?: unknown }).type === 'event_callback' && typeof event?.type === 'string' && ANSWERED_EVENTS.has(event.type);
    if (!answered || typeof expiresAt !== 'number' || expiresAt * 1000 > now()) return next();
    const workspace = (context.isEnterpriseInstall ? context.enterpriseId : context.teamId) ?? 'unknown';
    if (!firstInWindow(workspace)) return;
    logger.error(
      { workspace },
      `Slack's bot token for workspace ${workspace} expired and Slack refused to refresh it, so its messages are not answered ` +
        '(they would be billed at the agent, and the answer could not be posted): reinstall the app in that workspace (/slack/install)',
    );
  };
}
