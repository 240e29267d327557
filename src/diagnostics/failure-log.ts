import type { Redis } from 'ioredis';
import type { FailureEntry } from '../core/platform-context.js';
import { parseJson } from '../json.js';
import { queueKeys } from '../queue/keys.js';

/** The most recent messages the bridge gave up on, for the playground and operators. */
export class FailureLog {
  private readonly key: string;
  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly keep = 100,
  ) {
    this.key = queueKeys(prefix).failures;
  }

  async record(entry: FailureEntry): Promise<void> {
    await this.redis.multi().lpush(this.key, JSON.stringify(entry)).ltrim(this.key, 0, this.keep - 1).exec();
  }

  async recent(limit: number): Promise<FailureEntry[]> {
    const rows = await this.redis.lrange(this.key, 0, Math.max(0, limit - 1));
    return rows.flatMap((r) => {
      const entry = parseJson(r);
      return entry === undefined ? [] : [entry as FailureEntry];
    });
  }
}
