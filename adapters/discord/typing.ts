import { Refresher } from '../../src/core/refresher.js';

/**
 * Keeps Discord's typing indicator alive. One trigger lasts about 10 seconds, so it is sent
 * again every `refreshMs` until `stop`, on the shared {@link Refresher} (unref'd timers, a
 * give-up after `maxMs` in case a stop is never called).
 */
export class TypingKeeper {
  private readonly refresher: Refresher;

  constructor(
    private readonly send: (channelId: string) => Promise<void>,
    options: { refreshMs?: number; maxMs?: number } = {},
  ) {
    this.refresher = new Refresher({ refreshMs: options.refreshMs ?? 8_000, maxMs: options.maxMs ?? 15 * 60_000 });
  }

  /** Sends the first trigger (errors go to the caller) and starts refreshing. */
  async start(key: string, channelId: string): Promise<void> {
    if (this.refresher.has(key)) return;
    // Best effort after the first: a missed refresh only lets the indicator lapse.
    this.refresher.start(key, () => this.send(channelId));
    await this.send(channelId);
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
