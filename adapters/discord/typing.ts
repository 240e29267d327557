/**
 * Keeps Discord's typing indicator alive. One trigger lasts about 10 seconds, so it is sent
 * again every `refreshMs` until `stop`. Timers are unref'd (they never keep a process alive)
 * and give up after `maxMs`, in case a stop is never called.
 */
export class TypingKeeper {
  private readonly timers = new Map<string, { interval: NodeJS.Timeout; until: number }>();

  constructor(
    private readonly send: (channelId: string) => Promise<void>,
    private readonly options: { refreshMs?: number; maxMs?: number } = {},
  ) {}

  /** Sends the first trigger (errors go to the caller) and starts refreshing. */
  async start(key: string, channelId: string): Promise<void> {
    if (this.timers.has(key)) return;
    const refreshMs = this.options.refreshMs ?? 8_000;
    const until = Date.now() + (this.options.maxMs ?? 15 * 60_000);
    const interval = setInterval(() => {
      if (Date.now() > until) {
        this.stop(key);
        return;
      }
      // Best effort: a missed refresh only lets the indicator lapse.
      this.send(channelId).catch(() => {});
    }, refreshMs);
    interval.unref();
    this.timers.set(key, { interval, until });
    await this.send(channelId);
  }

  stop(key: string): void {
    const entry = this.timers.get(key);
    if (!entry) return;
    clearInterval(entry.interval);
    this.timers.delete(key);
  }

  stopAll(): void {
    for (const key of [...this.timers.keys()]) this.stop(key);
  }

  get active(): number {
    return this.timers.size;
  }
}
