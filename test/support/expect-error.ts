import { expect } from 'vitest';
import { AgentApiError } from '../../src/core/errors.js';

/** The AgentApiError `promise` rejects with (fails the test when it resolves or throws anything else). */
export async function agentFailure(promise: Promise<unknown>): Promise<AgentApiError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AgentApiError);
  return err as AgentApiError;
}
