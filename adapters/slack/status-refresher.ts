import { withTimeout } from '../../src/core/with-timeout.js';

/** Options of {@link StatusRefresher}. */
export interface StatusRefresherOptions {
  /**
   * How often the status is set again. Slack removes it two minutes after it was set when no
   * message was posted; a refresh well inside that keeps it up.
   * @defaultValue 90_000
   */
  refreshMs?: number;
  /**
   * How long after a `start` refreshing goes on without a `stop`: the longest one attempt at
   * the agent takes (AGENT_TIMEOUT_MS). A retry starts again (on whichever worker takes it);
   * a refresher left behind by an attempt that failed here must not outlive it, or it could
   * set the status again after the retry's reply.
   */
  maxMs: number;
}

interface Refreshing {
  interval: NodeJS.Timeout;
  until: number;
  inFlight?: Promise<void>;
}

/**
 * Keeps an assistant thread's status line ("is thinking…") up while the agent works, as the
 * Discord adapter keeps its typing indicator: Slack drops the status after two minutes without
 * a message, and an answer (with its retries) may take longer. Refreshes run in the background:
 * one that fails or hangs never holds up the reply, nor fails it. Timers are
 * unref'd, so they never keep a process alive.
 */
export class StatusRefresher {
  private readonly threads = new Map<string, Refreshing>();

  constructor(private readonly options: StatusRefresherOptions) {}

  /** Refreshes `key`'s status with `set` every `refreshMs` from now on (again from now, if already running). */
  start(key: string, set: () => Promise<void>): void {
    const running = this.threads.get(key);
    const until = Date.now() + this.options.maxMs;
    if (running) {
      running.until = until;
      return;
    }
    const entry: Refreshing = {
      until,
      interval: setInterval(() => {
        if (Date.now() > entry.until) return void this.stop(key);
        // One at a time: a refresh still waiting for Slack is not doubled.
        if (entry.inFlight) return;
        entry.inFlight = set()
          .catch(() => undefined)
          .finally(() => (entry.inFlight = undefined));
      }, this.options.refreshMs ?? 90_000),
    };
    entry.interval.unref();
    this.threads.set(key, entry);
  }

  /**
   * Stops refreshing `key`. Resolves once a refresh already sent has been answered (at most
   * `maxWaitMs`), so that a clear sent next is not overtaken by it; callers posting a reply
   * need not wait.
   */
  async stop(key: string, maxWaitMs = 1_000): Promise<void> {
    const entry = this.threads.get(key);
    if (!entry) return;
    clearInterval(entry.interval);
    this.threads.delete(key);
    if (entry.inFlight) await withTimeout(entry.inFlight, maxWaitMs, () => undefined);
  }

  /** Threads being refreshed now. */
  get active(): number {
    return this.threads.size;
  }
}
