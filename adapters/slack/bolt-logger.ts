import { LogLevel, type Logger as SlackLogger } from '@slack/bolt';
import type { Logger } from '../../src/logger.js';
import { clipAtWord } from '../../src/core/scrub.js';

/**
 * A `@slack/logger` Logger for Bolt, the Socket Mode client and every WebClient, routed to
 * the bridge's logger. Slack's debug output carries raw payloads (a credential modal's
 * submission included), so debug lines are dropped here whatever level is asked for; info
 * goes to our debug, warn and error stay as they are.
 */
export function createBoltLogger(logger: Logger): SlackLogger {
  const log = logger.child({ component: 'slack-sdk' });
  let name = 'slack';
  return {
    debug: () => {},
    info: (...msg: unknown[]) => log.debug({ sdk: name }, format(msg)),
    // Bolt's line for each event it could not authorize: authorize-errors.ts says what it was, in plain words.
    warn: (...msg: unknown[]) => (AUTHORIZE_FAILED.test(format(msg)) ? log.debug : log.warn).call(log, { sdk: name }, format(msg)),
    // A bare or replayed /slack/oauth_redirect is any visitor's doing, not a fault to alert on.
    error: (...msg: unknown[]) => (msg.some(isVisitorOAuthError) ? log.warn : log.error).call(log, { sdk: name }, format(msg)),
    // Never below INFO: the Socket Mode client serialises ack payloads when it sees DEBUG.
    setLevel: () => {},
    getLevel: () => LogLevel.INFO,
    setName: (n: string) => {
      name = n;
    },
  };
}

const AUTHORIZE_FAILED = /^Authorization of incoming event did not succeed/;

/** Errors of the OAuth redirect that a visitor's request causes (no code, no or a stale state). */
const VISITOR_OAUTH_ERRORS: ReadonlySet<string> = new Set(['slack_oauth_missing_code', 'slack_oauth_missing_state', 'slack_oauth_invalid_state']);

function isVisitorOAuthError(part: unknown): boolean {
  return part instanceof Error && VISITOR_OAUTH_ERRORS.has(String((part as { code?: unknown }).code));
}

/** Strings and error messages only: objects the SDK passes along may hold whole payloads. */
function format(parts: unknown[]): string {
  const text = parts
    .map((p) => {
      if (typeof p === 'string') return p;
      if (p instanceof Error) return `${p.name}: ${p.message}`;
      if (typeof p === 'number' || typeof p === 'boolean') return String(p);
      return '';
    })
    .filter(Boolean)
    .join(' ');
  // Cut at a space: a token cut in half would no longer be recognised by the logger's redaction.
  return clipAtWord(text, 2000);
}
