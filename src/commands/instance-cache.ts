import type { AgentApi, Instance } from '../agent-api/types.js';

export interface InstanceCache {
  /** The listing, reused for `ttlMs`; concurrent callers share one request. Failures are not cached. */
  get(): Promise<Instance[]>;
  /** A fresh listing, which also refreshes the cache. */
  refresh(signal?: AbortSignal): Promise<Instance[]>;
}

/** `listInstances` behind a short-lived cache (`Commands.cachedInstances`, the instance check of `bind`). */
export function createInstanceCache(agentApi: AgentApi, ttlMs: number, now: () => number): InstanceCache {
  let cached: { at: number; list: Instance[] } | undefined;
  let inflight: Promise<Instance[]> | undefined;

  async function refresh(signal?: AbortSignal): Promise<Instance[]> {
    const list = await agentApi.listInstances(signal);
    cached = { at: now(), list };
    return [...list];
  }

  return {
    async get() {
      if (cached && now() - cached.at < ttlMs) return [...cached.list];
      inflight ??= refresh().finally(() => {
        inflight = undefined;
      });
      return [...(await inflight)];
    },
    refresh,
  };
}
