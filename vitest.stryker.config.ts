import { defineConfig } from 'vitest/config';

// Stryker runs the suite many times in its sandbox: threads (not forks) so its per-test
// coverage hooks see every test, and no parallel files inside one Stryker worker.
// STRYKER_TESTS=a,b (file names under test/) narrows the suite to the files that test the
// mutated modules, which keeps a run on a few modules within minutes.
const only = process.env.STRYKER_TESTS?.split(',').map((f) => `test/${f.trim()}`);
export default defineConfig({
  test: {
    include: only ?? ['test/**/*.test.ts'],
    pool: 'threads',
    poolOptions: { threads: { singleThread: true } },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
