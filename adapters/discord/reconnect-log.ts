import type { Logger } from 'pino';

/** How often a shard still reconnecting is reported again. */
export const STILL_DOWN_EVERY_MS = 60_000;

/**
 * The log lines of shards reconnecting. discord.js tries again 500 ms after each failed attempt,
 * with no backoff, so while Discord's gateway cannot be reached a line per attempt would be two a
 * second per shard for as long as it lasts. One line when a shard starts reconnecting, a warning
 * once a minute while it still is (how long, how many attempts), and one when it is back.
 */
export class ReconnectLog {
  private readonly down = new Map<number, { since: number; attempts: number; reportedAt: number }>();

  constructor(
    private readonly logger: Pick<Logger, 'info' | 'warn'>,
    private readonly everyMs = STILL_DOWN_EVERY_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** discord.js is (again) trying to reconnect the shard. */
  reconnecting(shardId: number): void {
    const t = this.now();
    const state = this.down.get(shardId);
    if (!state) {
      this.down.set(shardId, { since: t, attempts: 1, reportedAt: t });
      this.logger.info({ shardId }, 'discord gateway reconnecting');
      return;
    }
    state.attempts += 1;
    if (t - state.reportedAt < this.everyMs) return;
    state.reportedAt = t;
    this.logger.warn(
      { shardId, downForMs: t - state.since, attempts: state.attempts },
      "discord gateway shard still reconnecting, and receives nothing meanwhile: Discord's gateway is unreachable from here (network, DNS, a proxy at DISCORD_API_URL) or keeps ending the connection",
    );
  }

  /** The shard is connected again (READY or RESUMED). */
  back(shardId: number): void {
    const state = this.down.get(shardId);
    if (!state) return;
    this.down.delete(shardId);
    if (state.attempts > 1) this.logger.info({ shardId, downForMs: this.now() - state.since, attempts: state.attempts }, 'discord gateway shard back');
  }
}
