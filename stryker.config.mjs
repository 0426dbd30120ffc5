// Mutation testing (npm run mutate -- --mutate <files>): a surviving mutant is a behaviour no
// test pins down. Stryker 9 (10 needs Node 22) with its vitest runner; only the test files
// that cover a mutant run against it (coverageAnalysis perTest).
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.stryker.config.ts' },
  coverageAnalysis: 'perTest',
  mutate: [
    'src/format/**/*.ts',
    // the point-in-time core and its defences: resolvers, cursors, keys, the failed-authentication table
    'src/query/**/*.ts',
    'src/auth/**/*.ts',
    'src/metrics/**/*.ts',
    'src/lifecycle/**/*.ts',
    'src/catalog/dataset-selection.ts',
    'src/generations/retention-budget.ts',
    'src/render/row-doorkeeper.ts',
    'src/http/header-block.ts',
    'src/api/router.ts',
    'src/time/instant.ts',
    'src/render/row-cache.ts',
    'src/render/format-time.ts',
    'src/cache/frequency-sketch.ts',
    'src/cache/response-cache.ts',
    'src/cache/head-arena.ts',
    'src/cache/body-assembler.ts',
    'src/cache/ask-index.ts',
    'src/api/request-ids.ts',
    'src/render/envelope.ts',
    'src/pipeline/page-scratch.ts',
    'src/cache/slot-lru.ts',
    'src/render/byte-writer.ts',
    'src/render/page-cache.ts',
    'src/render/page-arena.ts',
    'src/render/row-renderer.ts',
  ],
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  concurrency: 2,
  timeoutMS: 30_000,
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
