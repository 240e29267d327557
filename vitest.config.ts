import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts', 'adapters/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Files share one Redis but each uses its own key prefix. One file at a time: the fault and
    // load suites measure timing-sensitive behaviour (timeouts, backoff) on a 2-core machine.
    maxWorkers: 1,
  },
});
