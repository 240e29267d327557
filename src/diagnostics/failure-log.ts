import type { Redis } from 'ioredis';
import type { FailureEntry } from '../core/platform-context.js';
import { queueKeys } from '../queue/keys.js';

/** The most recent messages the bridge gave up on, for the playground and operators. */
export class FailureLog {
  private readonly key: string;
  private readonly totalKey: string;
  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly keep = 100,
  ) {
    const keys = queueKeys(prefix);
    this.key = keys.failures;
    this.totalKey = keys.failuresTotal;
  }

  async record(entry: FailureEntry): Promise<void> {
    // The total outlives the trimmed list: the playground's "Gave up" figure.
    await this.redis.multi().lpush(this.key, JSON.stringify(entry)).ltrim(this.key, 0, this.keep - 1).incr(this.totalKey).exec();
  }

  /** How many messages the bridge gave up on, ever (not only the recent ones kept). */
  async total(): Promise<number> {
    return Number((await this.redis.get(this.totalKey)) ?? 0);
  }

  async recent(limit: number): Promise<FailureEntry[]> {
    const rows = await this.redis.lrange(this.key, 0, Math.max(0, limit - 1));
    return rows.flatMap((r) => {
      try {
        return [JSON.parse(r) as FailureEntry];
      } catch {
        return [];
      }
    });
  }
}
