import type { Logger } from '../../src/logger.js';

/** Messages remembered per set (reactions skipped, reactions shown); beyond this the oldest are forgotten. */
const MAX_REMEMBERED = 10_000;

/**
 * Slack rate-limits reactions per workspace (Tier 3: about 50 a minute per method), far below
 * what a busy channel asks. The working reaction is a courtesy, so while Slack says to wait the
 * bot adds none (the reply comes as usual), says so in one log line per pause instead of one
 * warning per message, and makes no call Slack would refuse. A message whose reaction was
 * skipped needs no removal either.
 */
export class ReactionGate {
  private pausedUntil = 0;
  private readonly skipped = new Set<string>();
  private readonly shown = new Set<string>();

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether a reaction may be added now. */
  open(): boolean {
    return this.now() >= this.pausedUntil;
  }

  /** Slack answered 429 to a reaction call: no new working reactions until `retryAfterMs` from now. */
  limited(retryAfterMs: number): void {
    const until = this.now() + retryAfterMs;
    if (until <= this.pausedUntil) return;
    if (this.open()) {
      this.logger.warn({ retryAfterMs }, 'Slack is rate-limiting reactions: no working reaction until it allows them again (replies are not affected)');
    }
    this.pausedUntil = until;
  }

  /** The working reaction of `messageKey` is on (this process added it): it must come down whatever happens next. */
  added(messageKey: string): void {
    this.skipped.delete(messageKey);
    remember(this.shown, messageKey);
  }

  /**
   * The working reaction of `messageKey` was not added this time. Unless this process added it
   * before (an earlier attempt of the same message), there is nothing to take down.
   */
  skip(messageKey: string): void {
    if (!this.shown.has(messageKey)) remember(this.skipped, messageKey);
  }

  /** Whether the working reaction of `messageKey` needs taking down (false when it was skipped); forgets the message. */
  takeDown(messageKey: string): boolean {
    this.shown.delete(messageKey);
    return !this.skipped.delete(messageKey);
  }
}

/** Adds to a set that forgets its oldest entries past MAX_REMEMBERED (a message never finished, say). */
function remember(set: Set<string>, key: string): void {
  if (set.size >= MAX_REMEMBERED) set.delete(set.values().next().value!);
  set.add(key);
}
