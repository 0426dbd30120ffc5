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
    // what render/ held and was not mutated before it joined format/ (the scope is unchanged by the move)
    '!src/format/bytes/{digits,format-float,format-number}.ts',
    '!src/format/json/{cell-writers,json-literals,json-string,error-body}.ts',
    '!src/format/csv/csv-cells.ts',
    '!src/format/arenas/{row-arena,row-owner,row-owners}.ts',
    // the point-in-time core and its defences: resolvers, cursors, keys, the failed-authentication table
    'src/query/**/*.ts',
    'src/auth/**/*.ts',
    'src/metrics/**/*.ts',
    'src/lifecycle/**/*.ts',
    // the catalog: its document and validation, conditional read and write, selection (builtin.ts is data)
    'src/catalog/**/*.ts',
    '!src/catalog/builtin.ts',
    'src/generations/retention-budget.ts',
    'src/http/header-block.ts',
    'src/api/router.ts',
    'src/time/instant.ts',
    'src/cache/frequency-sketch.ts',
    'src/cache/response-cache.ts',
    'src/cache/head-arena.ts',
    'src/cache/body-assembler.ts',
    'src/cache/ask-index.ts',
    'src/api/request-ids.ts',
    'src/pipeline/page-scratch.ts',
    'src/cache/slot-lru.ts',
    // the point-in-time join: STRYKER_TESTS=join-compute.test.ts (join/), contract-asof-join.test.ts (the endpoint)
    'src/join/**/*.ts',
    'src/pipeline/join-endpoint.ts',
  ],
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  concurrency: 2,
  timeoutMS: 30_000,
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
