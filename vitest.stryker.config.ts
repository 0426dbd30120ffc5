import { defineConfig } from 'vitest/config';

// Stryker runs the suite many times in its sandbox: threads (not forks) so its per-test
// coverage hooks see every test, and no parallel files inside one Stryker worker.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'threads',
    poolOptions: { threads: { singleThread: true } },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
