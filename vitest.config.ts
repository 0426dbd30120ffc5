import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Two cores: forks keep uWS native handles isolated per test file.
    pool: 'forks',
    poolOptions: {
      forks: {
        maxForks: 2,
        minForks: 1,
        // s3rver (the S3 store the loader tests run against) encrypts ListObjectsV2
        // continuation tokens with DES-CBC (lib/controllers/bucket.js, chosen for its 8-byte
        // block). OpenSSL 3 moved DES to its legacy provider, so without this flag every
        // paged listing answers HTTP 500 "InternalError" (test/loader-s3.test.ts pages a
        // listing). Only the test processes get it; the server never needs it.
        execArgv: ['--openssl-legacy-provider'],
      },
    },
    testTimeout: 30_000,
    // expect.poll waits for what a page or server shows next; its default second is a bound a
    // loaded 2-core machine overruns (a browser page drawing while the suite runs beside it).
    // A poll returns as soon as it holds, so a long bound costs only a failing test its time.
    expect: { poll: { timeout: 20_000 } },
    hookTimeout: 60_000,
  },
});
