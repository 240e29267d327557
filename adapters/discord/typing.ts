import { Refresher } from '../../src/core/refresher.js';

/** How long a channel whose typing trigger Discord refused gets none (no request at all). */
const REFUSED_FOR_MS = 10 * 60_000;

export interface TypingKeeperOptions {
  refreshMs?: number;
  maxMs?: number;
  /**
   * Whether a failed trigger is a refusal for good (no access, missing permissions, a token
   * Discord no longer takes): the channel then gets no trigger for 10 minutes. Discord bans an IP
   * that makes 10,000 refused (401, 403, 429) requests in 10 minutes, and a refused trigger says
   * nothing the failed reply will not say.
   */
  refused?: (err: unknown) => boolean;
  now?: () => number;
}

/**
 * Keeps Discord's typing indicator alive. One trigger lasts about 10 seconds, so it is sent
 * again every `refreshMs` until `stop`, on the shared {@link Refresher} (unref'd timers, a
 * give-up after `maxMs` in case a stop is never called).
 */
export class TypingKeeper {
  private readonly refresher: Refresher;
  /** Channel → until when it gets no trigger. */
  private readonly refusedUntil = new Map<string, number>();
  private readonly now: () => number;

  constructor(
    private readonly send: (channelId: string) => Promise<void>,
    private readonly options: TypingKeeperOptions = {},
  ) {
    this.refresher = new Refresher({ refreshMs: options.refreshMs ?? 8_000, maxMs: options.maxMs ?? 15 * 60_000 });
    this.now = options.now ?? Date.now;
  }

  /** Sends the first trigger (errors go to the caller) and starts refreshing. */
  async start(key: string, channelId: string): Promise<void> {
    if (this.refresher.has(key)) return;
    const until = this.refusedUntil.get(channelId);
    if (until !== undefined) {
      if (this.now() < until) return;
      this.refusedUntil.delete(channelId);
    }
    // Best effort after the first: a missed refresh only lets the indicator lapse.
    this.refresher.start(key, () => this.trigger(key, channelId));
    await this.trigger(key, channelId);
  }

  /** One trigger; a refusal stops this key's refreshing and holds the channel's next ones. */
  private async trigger(key: string, channelId: string): Promise<void> {
    try {
      await this.send(channelId);
    } catch (err) {
      if (this.options.refused?.(err)) {
        this.refusedUntil.set(channelId, this.now() + REFUSED_FOR_MS);
        this.stop(key);
      }
      throw err;
    }
  }

  stop(key: string): void {
    void this.refresher.stop(key, 0);
  }

  stopAll(): void {
    this.refresher.stopAll();
  }

  get active(): number {
    return this.refresher.active;
  }
}
