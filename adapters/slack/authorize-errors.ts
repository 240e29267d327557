import { ErrorCode, type CodedError } from '@slack/bolt';
import { oncePer } from '../../src/core/once-per.js';
import { errorFields, type Logger } from '../../src/logger.js';
import { isRedisConnectionError, isRedisRefusingWrites } from '../../src/redis-errors.js';

/** How often one workspace without an installation is named in the log. */
const NO_INSTALLATION_EVERY_MS = 10 * 60_000;

/** Thrown from Bolt's error handler so that the event is not acked: Slack sends it again. */
export class InstallationUnreadable extends Error {}

/**
 * "Add to Slack": Bolt reads each event's installation (Redis) before any listener, and acks the
 * event with a 200 whatever went wrong there, so Slack never sends it again. Two cases differ:
 * - no installation (the workspace uninstalled, or Redis lost its data): nothing will ever
 *   answer it; acked, and named in plain words once per 10 minutes per workspace;
 * - Redis could not be read just now (a lost connection, a failover): the message is not lost
 *   to it. The error is thrown on, so Bolt does not ack, and the receiver answers 503
 *   ({@link answerUnreadable}): Slack sends the event again (after 1 and 5 minutes).
 */
export function authorizationErrors(logger: Logger) {
  const named = oncePer(NO_INSTALLATION_EVERY_MS);
  const unreadable = oncePer(60_000);
  return {
    /** Bolt's `app.error` for an AuthorizationError: true when handled, false when not one. */
    handle(err: CodedError): boolean {
      if (err.code !== ErrorCode.AuthorizationError) return false;
      const original = (err as { original?: unknown }).original;
      const missing = /^no Slack installation for (\S+)$/.exec(String((original as Error | undefined)?.message ?? ''));
      if (missing) {
        const installation = missing[1]!;
        if (named(installation)) {
          logger.warn(
            { installation },
            `Slack sent an event for ${installation}, which has no installation here, so its messages are not answered: the app was uninstalled there, or its ` +
              'installation was lost (Redis lost its data, or another QUEUE_PREFIX or INSTALLATION_ENCRYPTION_KEY): reinstall the app in that workspace (/slack/install)',
          );
        }
        return true;
      }
      if (isRedisConnectionError(original) || isRedisRefusingWrites(original)) {
        if (unreadable('redis')) logger.warn({ ...errorFields(original) }, 'could not read the Slack installation of an event (Redis unavailable): answered 503, so Slack sends it again');
        throw new InstallationUnreadable('the Slack installation could not be read (Redis unavailable)', { cause: original });
      }
      logger.error({ ...errorFields(original) }, 'could not authorize a Slack event: no listener ran');
      return true;
    },
  };
}

/** The receiver's answer to an event whose installation could not be read: 503, no X-Slack-No-Retry. */
export function answerUnreadable(error: unknown, response: { writeHead(status: number): { end(): void } }): boolean {
  if (!(error instanceof InstallationUnreadable)) return false;
  response.writeHead(503).end();
  return true;
}
