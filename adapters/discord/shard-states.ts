import { Gauge, type Registry } from 'prom-client';

/**
 * Whether each gateway shard of this process is connected, as `/readyz` and
 * `agent_bridge_discord_shard_up{shard="…"}` report it. A shard that drops and resumes goes
 * 0 → 1 on its own; the others are untouched.
 */
export class ShardStates {
  private readonly up = new Map<number, boolean>();
  /** Shards Discord closed for good (4004, 4010–4014): what to fix, for /readyz. */
  private readonly closed = new Map<number, string>();
  private readonly gauge?: Gauge<'shard'>;

  constructor(registry?: Registry) {
    if (!registry) return;
    const existing = registry.getSingleMetric('agent_bridge_discord_shard_up') as Gauge<'shard'> | undefined;
    this.gauge =
      existing ??
      new Gauge({
        name: 'agent_bridge_discord_shard_up',
        help: 'Discord gateway shards of this process: 1 connected, 0 not',
        labelNames: ['shard'] as const,
        registers: [registry],
      });
  }

  set(shardId: number, up: boolean): void {
    this.up.set(shardId, up);
    if (up) this.closed.delete(shardId);
    this.gauge?.set({ shard: String(shardId) }, up ? 1 : 0);
  }

  /**
   * Discord closed the shard with a code discord.js does not reconnect after: it stays down until
   * a restart, and /readyz says why (a shard merely reconnecting is only "down").
   */
  closedForGood(shardId: number, why: string): void {
    this.set(shardId, false);
    this.closed.set(shardId, why);
  }

  /** Ready when every expected shard is up; `detail` lists each shard's state, and what to fix for one closed for good. */
  readiness(expected: readonly number[]): { ok: boolean; detail: Record<string, unknown> } {
    const ids = [...new Set([...expected, ...this.up.keys()])].sort((a, b) => a - b);
    const shards = Object.fromEntries(ids.map((id) => [String(id), this.up.get(id) ? 'up' : 'down']));
    const ok = ids.length > 0 && ids.every((id) => this.up.get(id) === true);
    if (this.closed.size === 0) return { ok, detail: { shards } };
    return { ok, detail: { shards, closedForGood: Object.fromEntries([...this.closed].map(([id, why]) => [String(id), why])) } };
  }

  clear(): void {
    for (const id of this.up.keys()) this.set(id, false);
    this.closed.clear();
  }
}
