import { expect } from 'vitest';
import { loadTestConfig } from './config.js';
import { ConfigError } from '../../src/config/load.js';

/** The start-up refusal `loadConfig` gives for `env` (fails the test when it loads instead). */
export function configProblem(env: Record<string, string>): string {
  try {
    loadTestConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}
