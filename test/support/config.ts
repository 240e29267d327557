import { PLATFORM_SETTINGS } from '../../bin/platforms.js';
import { loadConfig, readEnvironment, type Config } from '../../src/config/load.js';

/** `loadConfig` as `npm start` calls it: every platform's settings module, from `env` (default: the process's). */
export function loadTestConfig(env: Record<string, string | undefined> = readEnvironment()): Readonly<Config> {
  return loadConfig(PLATFORM_SETTINGS, env);
}
