/**
 * The bulk workloads in every format: rows decoded per second by the client for pitcache's
 * JSON, CSV and Arrow answers, beside PostgreSQL's and DuckDB's one figure per workload
 * (rows per second: their clients decode rows too), each with its share of the ceiling, its
 * p99, and the bound the ceiling puts on the ratio (a server doing no work at all, sending
 * the same mean answer, could be at most that far ahead of the alternative in this run).
 */
import type { RunResult, WorkloadName } from '../alternatives/types.js';
import { BULK_WORKLOADS, OTHER_FORMATS } from '../workloads.js';
import type { AlternativeResults, BenchResults, CeilingRun, Outcome } from './model.js';
import { ceilingShare, isPitcache } from './measures.js';

const f = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
const rowsPerSec = (r: RunResult): number => (r.seconds > 0 ? r.rows / r.seconds : NaN);
const x = (a: number, b: number): string => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}x` : 'n/a');

/** The ceiling in rows per second: its req/s times the rows per answer of the run it stood for. */
function ceilingRows(r: RunResult, c: CeilingRun): number {
  return (c.requests / c.seconds) * (r.rows / Math.max(1, r.requests));
}

export function renderFormats(res: BenchResults, L: string[]): void {
  const pitcache = res.alternatives.filter((a) => isPitcache(a) && a.skipped === undefined && a.formats !== undefined);
  if (pitcache.length === 0) return;
  const postgres = res.alternatives.find((a) => /postgres/i.test(a.name));
  const duckdb = res.alternatives.find((a) => /duckdb/i.test(a.name));
  const altRows = (a: AlternativeResults | undefined, w: WorkloadName): number => {
    const o = a?.runs[w];
    return o?.ok === true ? rowsPerSec(o) : NaN;
  };
  L.push(
    '## Bulk answers by format',
    '',
    'Rows per second the client decodes (wrk counts `x-count` of every answer), the same queries in each format. ' +
      '"÷" columns: pitcache over the alternative, and in brackets the ceiling over it (the most any server on this HTTP layer could be ahead in this run).',
    '',
  );
  for (const w of BULK_WORKLOADS) {
    if (!pitcache.some((a) => a.formats?.[w] !== undefined)) continue;
    const pg = altRows(postgres, w);
    const dd = altRows(duckdb, w);
    L.push(
      `### ${w}: PostgreSQL ${f(pg)} rows/s, DuckDB ${f(dd)} rows/s`,
      '',
      '| pitcache | format | rows/s | p99 ms | share of its ceiling | p99 ÷ ceiling p99 | ÷ PostgreSQL (ceiling) | ÷ DuckDB (ceiling) |',
      '|---|---|---:|---:|---:|---:|---:|---:|',
    );
    for (const a of pitcache) {
      const rows: Array<[string, Outcome<RunResult> | undefined, Outcome<CeilingRun> | null | undefined]> = [
        ['json', a.runs[w], a.ceilings?.[w]],
        ...OTHER_FORMATS.map((fmt): [string, Outcome<RunResult> | undefined, Outcome<CeilingRun> | null | undefined] => [
          fmt,
          a.formats?.[w]?.[fmt]?.run,
          a.formats?.[w]?.[fmt]?.ceiling,
        ]),
      ];
      for (const [fmt, o, c] of rows) {
        if (o === undefined) continue;
        if (!o.ok) {
          L.push(`| ${a.name} | ${fmt} | failed: ${o.error.split('\n')[0]} | | | | | |`);
          continue;
        }
        const r = rowsPerSec(o);
        let share = '';
        let p99 = '';
        let boundPg = '';
        let boundDd = '';
        if (c?.ok === true) {
          const s = ceilingShare(o, c);
          share = `${(s.share * 100).toFixed(0)}%`;
          p99 = `${s.p99x.toFixed(2)}x`;
          boundPg = ` (${x(ceilingRows(o, c), pg)})`;
          boundDd = ` (${x(ceilingRows(o, c), dd)})`;
        }
        L.push(`| ${a.name} | ${fmt} | ${f(r)} | ${o.p99Ms.toFixed(1)} | ${share} | ${p99} | ${x(r, pg)}${boundPg} | ${x(r, dd)}${boundDd} |`);
      }
    }
    L.push('');
  }
}
