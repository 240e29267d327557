import { Writable } from 'node:stream';
import type { AgentApi, CredentialResult, Instance } from '../../src/agent-api/types.js';
import { createLogger, SecretRegistry, type Logger } from '../../src/logger.js';

/** A hand-written AgentApi: instances to list, errors to throw, and a record of every call. */
export interface FakeAgentApi extends AgentApi {
  instances: Instance[];
  listError?: unknown;
  /** Never answers listInstances (until aborted). */
  listHangs?: boolean;
  addError?: unknown;
  addResult?: CredentialResult;
  onAdd?: (instanceId: string, key: string, value: string) => void;
  listCalls: number;
  added: Array<{ instanceId: string; key: string; value: string }>;
}

export const INSTANCES: Instance[] = [
  { id: 'inst_a', name: 'Alpha', status: 'running', type: 'assistant' },
  { id: 'inst_b', name: 'Beta', status: 'stopped', type: 'assistant' },
];

export function fakeAgentApi(instances: Instance[] = INSTANCES): FakeAgentApi {
  const api: FakeAgentApi = {
    instances: [...instances],
    listCalls: 0,
    added: [],
    async chat() {
      throw new Error('not used by the commands');
    },
    async listInstances(signal?: AbortSignal) {
      api.listCalls++;
      if (api.listHangs) {
        return new Promise<Instance[]>((_, reject) => signal?.addEventListener('abort', () => reject(new Error('aborted'))));
      }
      if (api.listError) throw api.listError;
      return api.instances.map((i) => ({ ...i }));
    },
    async addCredential(instanceId, key, value) {
      api.onAdd?.(instanceId, key, value);
      if (api.addError) throw api.addError;
      api.added.push({ instanceId, key, value });
      return api.addResult ?? { success: true, key };
    },
    lastAnsweredAt: () => undefined,
  };
  return api;
}

/** A JSON logger whose lines are kept, with its own (empty) secret registry so nothing is hidden. */
export function captureLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger({ level: 'debug', destination, registry: new SecretRegistry() }), lines };
}
