import { Gauge, type Registry } from 'prom-client';

/**
 * Whether each gateway shard of this process is connected, as `/readyz` and
 * `agent_bridge_discord_shard_up{shard="…"}` report it. A shard that drops and resumes goes
 * 0 → 1 on its own; the others are untouched.
 */
export class ShardStates {
  private readonly up = new Map<number, boolean>();
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
    this.gauge?.set({ shard: String(shardId) }, up ? 1 : 0);
  }

  /** Ready when every expected shard is up; `detail` lists each shard's state. */
  readiness(expected: readonly number[]): { ok: boolean; detail: Record<string, unknown> } {
    const ids = [...new Set([...expected, ...this.up.keys()])].sort((a, b) => a - b);
    const shards = Object.fromEntries(ids.map((id) => [String(id), this.up.get(id) ? 'up' : 'down']));
    return { ok: ids.length > 0 && ids.every((id) => this.up.get(id) === true), detail: { shards } };
  }

  clear(): void {
    for (const id of this.up.keys()) this.set(id, false);
  }
}
