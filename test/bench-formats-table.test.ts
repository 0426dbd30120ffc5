/**
 * RESULTS.md's "Bulk answers by format": pitcache's rows/s in JSON, CSV and Arrow for each
 * bulk workload beside PostgreSQL's and DuckDB's, with the share of each format's own
 * ceiling and the bound that ceiling puts on each ratio (its req/s times the rows per answer
 * of the run it stood for, over the alternative's rows/s).
 */
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../bench/alternatives/types.js';
import type { AlternativeResults, BenchResults, CeilingRun } from '../bench/report/model.js';
import { renderFormats } from '../bench/report/formats-table.js';

/** a run of `requests` answers of `rowsEach` rows over `seconds` */
const run = (requests: number, seconds: number, rowsEach: number, p99Ms = 10): RunResult => ({
  requests,
  seconds,
  rows: requests * rowsEach,
  p50Ms: p99Ms / 2,
  p99Ms,
  errors: 0,
});
const ceiling = (requests: number, seconds: number): CeilingRun => ({ ...run(requests, seconds, 0, 5), bodyBytes: 1000 });

describe('bulk answers by format', () => {
  const pit: AlternativeResults = {
    name: 'pitcache (uWS, 1 worker)',
    // json: 100 answers of 1,000 rows in 10 s = 10,000 rows/s; its ceiling 40 req/s
    runs: { latest: { ok: true, ...run(100, 10, 1000) } },
    ceilings: { latest: { ok: true, ...ceiling(400, 10) } },
    formats: {
      latest: {
        csv: { run: { ok: true, ...run(200, 10, 1000) }, ceiling: { ok: true, ...ceiling(800, 10) } },
        arrow: { run: { ok: false, error: 'wrk died\nstack' }, ceiling: null },
      },
    },
  };
  const pg: AlternativeResults = { name: 'postgresql (pgbench)', runs: { latest: { ok: true, ...run(50, 10, 1000) } } };
  const dd: AlternativeResults = { name: 'duckdb (in process)', runs: { latest: { ok: true, ...run(10, 10, 1000) } } };
  const lines: string[] = [];
  renderFormats({ alternatives: [pit, pg, dd] } as unknown as BenchResults, lines);
  const text = lines.join('\n');

  it('puts each format beside both alternatives, with the share of its ceiling and the bound on each ratio', () => {
    expect(text).toContain('### latest: PostgreSQL 5,000 rows/s, DuckDB 1,000 rows/s');
    // json: 10,000 rows/s, 2x PostgreSQL, 10x DuckDB; the ceiling (40 req/s x 1,000 rows) 8x and 40x
    expect(text).toContain('| pitcache (uWS, 1 worker) | json | 10,000 | 10.0 | 25% | 2.00x | 2.00x (8.00x) | 10.00x (40.00x) |');
    expect(text).toContain('| pitcache (uWS, 1 worker) | csv | 20,000 | 10.0 | 25% | 2.00x | 4.00x (16.00x) | 20.00x (80.00x) |');
  });

  it('says a format failed in one line, and leaves out workloads nobody ran in other formats', () => {
    expect(text).toContain('| pitcache (uWS, 1 worker) | arrow | failed: wrk died | | | | | |');
    expect(text).not.toContain('### page-walk');
    const none: string[] = [];
    renderFormats({ alternatives: [pg, dd] } as unknown as BenchResults, none);
    expect(none).toEqual([]);
  });
});
