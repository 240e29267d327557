import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts', 'adapters/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Files share one Redis but each uses its own key prefix; two at a time keeps the 2-core box responsive.
    maxWorkers: 2,
  },
});
