import type { ReplyPort } from '../core/reply-port.js';
import type { ReplyTarget } from '../core/message.js';
import { withTimeout } from '../core/with-timeout.js';
import { errorFields, type Logger } from '../logger.js';

/**
 * The "working" signal of one message (Slack's :eyes: reaction, Discord's typing, the
 * playground's note). It never holds up the agent call or the reply: it starts beside the
 * call, and only when the answer takes longer than `delayMs` (an answer within it needs no
 * signal, and a fast reply then costs no platform calls for it: reactions are rate-limited
 * per workspace). An assistant thread's status line ("is thinking…") is the platform's own
 * progress surface, so it shows at once.
 */
export class WorkingIndicator {
  private timer: NodeJS.Timeout | undefined;
  private shown: Promise<void> | undefined;

  /**
   * @param shownBefore an earlier attempt at this message may have shown the signal (it got
   *   as far as the call, or failed and is retried): a reply takes it down even if this
   *   attempt shows none.
   */
  constructor(
    private readonly port: ReplyPort,
    private readonly target: ReplyTarget,
    private readonly delayMs: number,
    /** Gives the message's logger, built on first use (see process-message.ts). */
    private readonly scope: { log(): Logger },
    private readonly shownBefore = false,
  ) {}

  /** The agent call starts now: show the signal if it is still running after the delay. */
  begin(): void {
    if (!this.port.startWorking || this.shown || this.timer) return;
    if (this.delayMs <= 0 || this.target.assistantThread) {
      this.show();
      return;
    }
    this.timer = setTimeout(() => this.show(), this.delayMs);
  }

  /**
   * Lets a signal that was asked for land before what it announces (the reply, a notice),
   * waiting at most `maxWaitMs`: a slow platform call never holds up the reply.
   */
  async landed(maxWaitMs = 1_000): Promise<void> {
    if (this.shown) await withTimeout(this.shown, maxWaitMs, () => undefined);
  }

  /** The call is over (answered or failed): no signal from now on if none was shown. */
  settle(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * Takes the signal down after a reply (only if it was shown) or marks a failure (always:
   * Slack adds its warning reaction then). Resolves once done; callers may leave a success's
   * removal running in the background.
   */
  async end(outcome: 'ok' | 'failed'): Promise<void> {
    this.settle();
    if (outcome === 'ok' && !this.shown && !this.shownBefore) return;
    await this.shown;
    await this.port.stopWorking?.(this.target, outcome).catch((err) => this.scope.log().debug({ ...errorFields(err) }, 'working indicator failed'));
  }

  private show(): void {
    this.timer = undefined;
    this.shown = this.port.startWorking!(this.target).catch((err) => this.scope.log().debug({ ...errorFields(err) }, 'working indicator failed'));
  }
}
