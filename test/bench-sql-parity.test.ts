/**
 * The benchmark's SQL alternatives answer the contract's rows: DuckDB (in process) on small
 * seeded snapshots, compared with the naive reference model, pages walked by keyset.
 * PostgreSQL needs a server started from its binaries, so it runs only on request:
 * BENCH_SQL_PARITY_PG=1 npx vitest run test/bench-sql-parity.test.ts
 * (or `npx tsx bench/alternatives/duckdb-postgres-check.ts all`).
 */
import { describe, expect, it } from 'vitest';
import { runParityCheck } from '../bench/alternatives/duckdb-postgres-check.js';
import { createDuckDbAlternative } from '../bench/alternatives/duckdb.js';
import { createPostgresAlternative } from '../bench/alternatives/postgres.js';

const SEEDS = [1000, 8919, 16838, 24757];

const duck = createDuckDbAlternative();
const duckOk = await duck.available();
const pg = createPostgresAlternative();
const pgOk = process.env.BENCH_SQL_PARITY_PG === '1' ? await pg.available() : { ok: false as const, reason: 'set BENCH_SQL_PARITY_PG=1' };

describe('bench SQL alternatives give the contract rows', () => {
  it.skipIf(!duckOk.ok)('duckdb', { timeout: 180_000 }, async () => {
    const r = await runParityCheck(duck, SEEDS);
    expect(r.failures.slice(0, 5)).toEqual([]);
    expect(r.queries).toBeGreaterThan(300);
    expect(r.rows).toBeGreaterThan(1000);
  });

  it.skipIf(!pgOk.ok)('postgresql', { timeout: 180_000 }, async () => {
    const r = await runParityCheck(pg, SEEDS);
    expect(r.failures.slice(0, 5)).toEqual([]);
    expect(r.queries).toBeGreaterThan(300);
  });
});
