/* global process, console */
// Issue 11's targets across bench runs: for each RESULTS.json given, and each of the three
// workloads, the best pitcache share of its ceiling (from the interleaved rounds), and the
// ratios the alternatives allow: the fastest ceiling's req/s over PostgreSQL's and DuckDB's.
// A ratio target above that bound could not be met in that run by any server on this HTTP
// layer (bench/report/measures.ts, fastestCeiling).
// Usage: node bench/hand/bounds.mjs ROOT RESULTS.json...
//   ROOT: a checkout with dist/ built (npm run bench builds it)
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const root = resolve(process.argv[2] ?? '.');
const { bestPitcache, ceilingShare, fastestCeiling, isPitcache, reqPerSec } = await import(`${root}/dist/bench/report/measures.js`);
const workloads = ['walk-forward-series', 'walk-forward-loop', 'repeated'];
const pct = (x) => `${(x * 100).toFixed(0)}%`;
const x1 = (x) => (Number.isFinite(x) ? `${x.toFixed(1)}x` : 'n/a');

console.log(
  '| run | workload | best share (p99 ÷ ceiling) | ceiling req/s | PostgreSQL req/s | ceiling ÷ PostgreSQL | best ÷ PostgreSQL | DuckDB req/s | ceiling ÷ DuckDB | best ÷ DuckDB |',
);
console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const file of process.argv.slice(3)) {
  const res = JSON.parse(readFileSync(file, 'utf8'));
  for (const w of workloads) {
    const shares = res.alternatives
      .filter(isPitcache)
      .flatMap((a) => (a.runs[w]?.ok && a.ceilings?.[w]?.ok ? [ceilingShare(a.runs[w], a.ceilings[w])] : []))
      .sort((p, q) => q.share - p.share);
    const ceiling = fastestCeiling(res, w);
    const best = bestPitcache(res, w);
    const bestRps = best === null ? NaN : reqPerSec(best.run);
    const alt = (pattern) => {
      const r = res.alternatives.find((a) => pattern.test(a.name))?.runs[w];
      return r?.ok ? reqPerSec(r) : NaN;
    };
    const pg = alt(/postgres/i);
    const duck = alt(/duckdb/i);
    const top = shares[0];
    console.log(
      `| ${res.startedAt.slice(0, 16)} | ${w} | ${top ? `${pct(top.share)} (${top.p99x.toFixed(2)}x)` : 'n/a'} | ${Math.round(ceiling ?? NaN)} | ${Math.round(pg)} | ${x1(ceiling / pg)} | ${x1(bestRps / pg)} | ${Math.round(duck)} | ${x1(ceiling / duck)} | ${x1(bestRps / duck)} |`,
    );
  }
}
