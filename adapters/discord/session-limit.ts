/**
 * Discord's daily session-start limit: `GET /gateway/bot` reports `session_start_limit`
 * (`remaining` IDENTIFYs, about 1000 a day per bot, and `reset_after` ms until the count resets).
 * A bot that restarted many times (a crash loop, many deploys, many shards) sees `remaining: 0`
 * until then, and connecting again before the reset cannot succeed.
 */

/** Discord connects again once the limit resets, but checks at least this often (a restart elsewhere may free nothing, a reset may come early). */
export const SESSION_LIMIT_RECHECK_MS = 5 * 60_000;

/** Past the reset, before the next try: Discord's clock and ours differ a little. */
const AFTER_RESET_MARGIN_MS = 1_000;

/** Not enough session starts are left today to connect the shards. */
export class SessionStartLimitError extends Error {
  constructor(
    /** When Discord resets the count (undefined when it could not be read). */
    readonly resetsAt: Date | undefined,
    readonly remaining: number | undefined,
  ) {
    const when = resetsAt ? `it resets at ${resetsAt.toISOString()}` : 'Discord did not say when it resets';
    super(
      `Discord's daily session-start limit is used up (${remaining ?? 'too few'} session starts left today, ` +
        `Discord allows about 1000 a day per bot; restarts and reconnects use them up); ${when}`,
    );
    this.name = 'SessionStartLimitError';
  }
}

/**
 * @discordjs/ws 1.x `WebSocketManager.connect()` refuses to connect with a plain `Error` (no class,
 * no code): "Not enough sessions remaining to spawn N shards; only R remaining; resets at <ISO>".
 * Its wording is all there is to recognise it by, so it is read here and nowhere else.
 */
const DISCORD_JS_MESSAGE = /^Not enough sessions remaining to spawn \d+ shards?; only (\d+) remaining; resets at (\S+)/;

/** The session-start-limit refusal in `err`, as a typed error; undefined for anything else. */
export function sessionStartLimitOf(err: unknown): SessionStartLimitError | undefined {
  if (err instanceof SessionStartLimitError) return err;
  const match = err instanceof Error ? DISCORD_JS_MESSAGE.exec(err.message) : null;
  if (!match) return undefined;
  const resetsAt = new Date(match[2]!);
  return new SessionStartLimitError(Number.isNaN(resetsAt.getTime()) ? undefined : resetsAt, Number(match[1]));
}

/** How long to wait before connecting again: until the reset, but no longer than the recheck interval. */
export function sessionLimitWaitMs(limit: SessionStartLimitError, now = Date.now()): number {
  if (!limit.resetsAt) return SESSION_LIMIT_RECHECK_MS;
  const untilReset = limit.resetsAt.getTime() - now + AFTER_RESET_MARGIN_MS;
  return Math.min(Math.max(AFTER_RESET_MARGIN_MS, untilReset), SESSION_LIMIT_RECHECK_MS);
}
