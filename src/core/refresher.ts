import { withTimeout } from './with-timeout.js';

/** Options of {@link Refresher}. */
export interface RefresherOptions {
  /** How often the action runs again. */
  refreshMs: number;
  /**
   * How long after a `start` refreshing goes on without a `stop`: a stop can be missed (the job
   * is retried on another worker), and an indicator must not outlive the work it stands for.
   */
  maxMs: number;
}

interface Refreshing {
  interval: NodeJS.Timeout;
  until: number;
  inFlight?: Promise<void>;
}

/**
 * Runs a platform's "still working" action again and again while the agent works: Discord's
 * typing trigger lasts about 10 s, Slack drops an assistant thread's status two minutes after it
 * was set. Refreshes run in the background: one that fails or hangs never holds up the reply,
 * nor fails it, and one still waiting is not doubled. Timers are unref'd, so they never keep a
 * process alive. The first run is the caller's (its errors are the caller's to handle).
 */
export class Refresher {
  private readonly entries = new Map<string, Refreshing>();

  constructor(private readonly options: RefresherOptions) {}

  /** Whether `key` is being refreshed. */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** Runs `refresh` for `key` every `refreshMs` from now on (if already running: for `maxMs` from now). */
  start(key: string, refresh: () => Promise<void>): void {
    const running = this.entries.get(key);
    const until = Date.now() + this.options.maxMs;
    if (running) {
      running.until = until;
      return;
    }
    const entry: Refreshing = {
      until,
      interval: setInterval(() => {
        if (Date.now() > entry.until) return void this.stop(key);
        if (entry.inFlight) return;
        entry.inFlight = refresh()
          .catch(() => undefined)
          .finally(() => (entry.inFlight = undefined));
      }, this.options.refreshMs),
    };
    entry.interval.unref();
    this.entries.set(key, entry);
  }

  /**
   * Stops refreshing `key`. Resolves once a refresh already sent has been answered (at most
   * `maxWaitMs`; 0 waits for nothing), so that a clear sent next is not overtaken by it.
   */
  async stop(key: string, maxWaitMs = 1_000): Promise<void> {
    const entry = this.entries.get(key);
    if (!entry) return;
    clearInterval(entry.interval);
    this.entries.delete(key);
    if (entry.inFlight && maxWaitMs > 0) await withTimeout(entry.inFlight, maxWaitMs, () => undefined);
  }

  stopAll(): void {
    for (const key of [...this.entries.keys()]) void this.stop(key, 0);
  }

  /** Keys being refreshed now. */
  get active(): number {
    return this.entries.size;
  }
}
