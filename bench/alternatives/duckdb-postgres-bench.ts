/**
 * Runs the SQL alternatives alone on a bench data set, for developing them without the full
 * runner: load, cross-check, then each workload. With `--pitcache URL` it also compares, for a
 * sample of each workload's queries, every row (all pages) with a running pitcache's answer.
 *
 * npx tsx bench/alternatives/duckdb-postgres-bench.ts --data scale-1m [--quick] [--root DIR]
 *   [--only duckdb|postgres] [--duration 10] [--warmup 2] [--connections 64] [--count 200]
 *   [--pitcache http://127.0.0.1:8080 --api-key KEY] [--sample 5]
 */
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import type { Alternative, BenchData, BenchQuery, WorkloadName } from './types.js';
import type { CanonicalRow, KeysetAfter, PageFetcher } from './duckdb-postgres-plan.js';
import { canonicalCell, findDataset, storedType } from './duckdb-postgres-plan.js';
import { createDuckDbAlternative } from './duckdb.js';
import { createPostgresAlternative } from './postgres.js';
import { ensureData } from '../data/ensure-data.js';
import { planFor } from '../data/plan.js';
import type { DataSetName } from '../data/plan.js';
import { WORKLOADS, buildWorkloads, toPath } from '../workloads.js';

const { values: args } = parseArgs({
  options: {
    data: { type: 'string', default: 'scale-1m' },
    quick: { type: 'boolean', default: false },
    root: { type: 'string', default: resolve('bench/.data') },
    only: { type: 'string' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '64' },
    count: { type: 'string', default: '200' },
    'page-walks': { type: 'string', default: '4' },
    workload: { type: 'string' },
    pitcache: { type: 'string' },
    'api-key': { type: 'string' },
    sample: { type: 'string', default: '5' },
  },
});

async function pitcacheRows(data: BenchData, q: BenchQuery, pages: boolean): Promise<CanonicalRow[]> {
  const ds = findDataset(data.datasets, q);
  const rows: CanonicalRow[] = [];
  let cursor: string | undefined;
  do {
    const params = cursor === undefined ? q.params : { ...q.params, cursor };
    const r = await fetch(args.pitcache + toPath({ dataset: q.dataset, params }), { headers: { 'x-api-key': args['api-key'] ?? data.apiKey } });
    if (!r.ok) throw new Error(`pitcache ${r.status}: ${await r.text()}`);
    const body = (await r.json()) as { data: Record<string, unknown>[]; next_cursor?: string };
    for (const row of body.data) {
      const out: CanonicalRow = {};
      for (const c of ds.columns) out[c.name] = canonicalCell(storedType(c), row[c.name]);
      rows.push(out);
    }
    cursor = pages ? body.next_cursor : undefined;
  } while (cursor !== undefined);
  return rows;
}

async function sqlRows(alt: PageFetcher, q: BenchQuery, pages: boolean): Promise<CanonicalRow[]> {
  const rows: CanonicalRow[] = [];
  let after: KeysetAfter | null = null;
  do {
    const page = await alt.fetchPage(q, after);
    rows.push(...page.rows);
    after = pages ? page.next : null;
  } while (after !== null);
  return rows;
}

async function main(): Promise<void> {
  const name = args.data as DataSetName;
  const data = await ensureData(args.root, name, args.quick, (m) => console.log(m));
  const lists = buildWorkloads(planFor(name, args.quick), { count: Number(args.count), pageWalkCount: Number(args['page-walks']) });
  console.log(`data ${data.name}: ${data.totalRows.toLocaleString('en-US')} rows in ${data.datasets.length} dataset(s)`);
  const t0 = performance.now();
  for (const ds of data.datasets) await ds.csvPath();
  console.log(`CSV side files ready in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const alts: (Alternative & PageFetcher)[] = [];
  if (args.only === undefined || args.only === 'duckdb') alts.push(createDuckDbAlternative());
  if (args.only === undefined || args.only === 'postgres') alts.push(createPostgresAlternative());
  const workloads = args.workload === undefined ? WORKLOADS : [args.workload as WorkloadName];
  const totals = new Map<string, number[]>();
  for (const alt of alts) {
    const ok = await alt.available();
    if (!ok.ok) {
      console.log(`${alt.name}: not available: ${ok.reason}`);
      continue;
    }
    const info = await alt.setup(data);
    console.log(
      `${alt.name}: loaded in ${info.loadSeconds.toFixed(1)} s, ${((info.rssBytes ?? 0) / 2 ** 20).toFixed(0)} MiB, ${info.version}; ${info.note ?? ''}`,
    );
    try {
      for (const w of workloads) {
        const sample = lists[w].slice(0, Number(args.sample));
        const counts: number[] = [];
        for (const q of sample) counts.push(await alt.totalRows!(q));
        const seen = totals.get(w);
        if (seen === undefined) totals.set(w, counts);
        else if (JSON.stringify(seen) !== JSON.stringify(counts))
          console.log(`  MISMATCH ${w} total rows: ${JSON.stringify(seen)} vs ${JSON.stringify(counts)}`);
        if (args.pitcache !== undefined) {
          for (const q of sample) {
            const want = JSON.stringify(await pitcacheRows(data, q, w === 'page-walk'));
            const got = JSON.stringify(await sqlRows(alt, q, w === 'page-walk'));
            console.log(
              `  ${w} ${toPath(q)}: ${want === got ? 'same rows as pitcache' : 'DIFFERENT from pitcache'} (${(JSON.parse(got) as unknown[]).length} rows)`,
            );
          }
        }
        const r = await alt.run(w, lists[w], { connections: Number(args.connections), durationSec: Number(args.duration), warmupSec: Number(args.warmup) });
        console.log(
          `  ${w.padEnd(21)} ${(r.requests / r.seconds).toFixed(0).padStart(7)} req/s  p50 ${r.p50Ms.toFixed(2)} ms  p99 ${r.p99Ms.toFixed(2)} ms  ` +
            `${(r.rows / r.seconds).toFixed(0)} rows/s  errors ${r.errors}  (${r.requests} in ${r.seconds.toFixed(1)} s; ${r.note ?? ''})`,
        );
      }
    } finally {
      await alt.teardown();
    }
  }
}

await main();
