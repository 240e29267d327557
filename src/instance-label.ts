import type { AgentApi, Instance } from './agent-api/types.js';

/** The `agent_instance` value of calls to an instance the service never listed. */
export const OTHER_INSTANCE = 'other';

/** Options of {@link createInstanceLabel}. */
export interface InstanceLabelOptions {
  /** Instances remembered; past it, newly listed ones are labelled `other`. @defaultValue 500 */
  maxInstances?: number;
  /** Longest ID used as a label. @defaultValue 128 */
  maxLength?: number;
}

/**
 * Keeps the `agent_instance` metric label bounded: a time series per instance the agent service
 * listed, and `other` for any ID nobody can vouch for (an admin can type any text as an
 * instance ID, and each distinct label value is a series Prometheus keeps forever).
 */
export interface InstanceLabel {
  /** Remembers the instances of a listing. */
  learn(instances: readonly Pick<Instance, 'id'>[]): void;
  /** The label for a call: the ID when listed, `other` when not, '' for calls to no instance. */
  label(instanceId: string | undefined): string;
}

export function createInstanceLabel(options: InstanceLabelOptions = {}): InstanceLabel {
  const max = options.maxInstances ?? 500;
  const maxLength = options.maxLength ?? 128;
  const known = new Set<string>();
  return {
    learn(instances) {
      for (const { id } of instances) {
        if (known.size >= max) return;
        if (id.length <= maxLength) known.add(id);
      }
    },
    label: (instanceId) => (instanceId === undefined ? '' : known.has(instanceId) ? instanceId : OTHER_INSTANCE),
  };
}

/** The same client, teaching `label` every listing it fetches. */
export function learnInstancesFrom(api: AgentApi, label: InstanceLabel): AgentApi {
  // Every other method (and any added later) is the client's own, reached through the prototype.
  const learning = Object.create(api) as AgentApi;
  learning.listInstances = async (signal) => {
    const instances = await api.listInstances(signal);
    label.learn(instances);
    return instances;
  };
  return learning;
}
