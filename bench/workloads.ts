/**
 * Seeded query lists: every alternative runs the SAME list of each workload. Queries are
 * derived from the data set's plan (series, days), not from reading the data.
 */
import { writeFile } from 'node:fs/promises';
import { Rng } from '../src/demo/prng.js';
import { formatDate } from '../src/time/instant.js';
import type { BenchQuery, WorkloadName } from './alternatives/types.js';
import { datasetIdOf, seriesKeyOf, type DataSetPlan, type DatasetPlan } from './data/plan.js';
import { findProduct } from '../src/catalog/products.js';

/** Concurrent backtest loops of walk-forward-loop (one per benchmark connection). */
const LOOPS = 64;

/** Distinct queries of `repeated`: their answers (~35 KB each) fit pitcache's default 64 MiB response cache. */
const REPEATED = 500;

export const WORKLOADS: readonly WorkloadName[] = ['walk-forward-series', 'walk-forward-loop', 'repeated', 'walk-forward-dataset', 'latest', 'page-walk'];

export const WORKLOAD_TEXT: Record<WorkloadName, string> = {
  'walk-forward-series': 'one series (product filter), date_from = D-90, date_to = as_of = D, default limit',
  'walk-forward-dataset': 'every series of a dataset, date_from = D-90, date_to = as_of = D, limit=10000 (first page)',
  latest: 'latest row of every series, as_of = D on half the queries, none on the rest, limit=10000',
  'page-walk': 'full history (latest=false), as_of = D on half, limit=10000, following next_cursor to the end',
  'walk-forward-loop': `the queries of walk-forward-series as backtest loops send them: ${LOOPS} loops, each over one series stepping D by one day, interleaved`,
  repeated: `the first ${REPEATED} queries of walk-forward-series, asked over and over in that order: a farm re-running the same backtests`,
};

/** The bulk workloads: each is also measured in CSV and Arrow (the same queries with `format`). */
export const BULK_WORKLOADS: readonly WorkloadName[] = ['walk-forward-dataset', 'latest', 'page-walk'];
export const OTHER_FORMATS = ['csv', 'arrow'] as const;
export type OtherFormat = (typeof OTHER_FORMATS)[number];

/** The same queries answered in another format. */
export function inFormat(queries: readonly BenchQuery[], format: OtherFormat): BenchQuery[] {
  return queries.map((q) => ({ ...q, params: { ...q.params, format } }));
}

const WINDOW_DAYS = 90;

export interface WorkloadOptions {
  /** distinct queries per workload (page-walk: chains) */
  readonly count: number;
  readonly pageWalkCount: number;
  readonly seed?: string;
}

export function buildWorkloads(plan: DataSetPlan, opts: WorkloadOptions): Record<WorkloadName, BenchQuery[]> {
  const seed = opts.seed ?? 'pitcache-bench-workloads-v1';
  const all = plan.datasets;
  const single = all.filter(selectsOneSeries);
  if (single.length === 0) throw new Error(`data set ${plan.name} has no dataset whose filters select one series`);
  const series = make(opts.count, `${seed}/a`, single, (p, r) => ({ ...window(p, r), ...filterOf(p, r.int(0, p.series.length - 1)) }));
  return {
    'walk-forward-series': series,
    repeated: series.slice(0, REPEATED),
    'walk-forward-dataset': make(opts.count, `${seed}/b`, all, (p, r) => ({ ...window(p, r), limit: '10000' })),
    latest: make(opts.count, `${seed}/c`, all, (p, r): Record<string, string> =>
      r.chance(0.5) ? { as_of: decision(p, r), limit: '10000' } : { limit: '10000' },
    ),
    'walk-forward-loop': loops(opts.count, `${seed}/e`, single),
    'page-walk': make(opts.pageWalkCount, `${seed}/d`, all, (p, r): Record<string, string> =>
      r.chance(0.5) ? { latest: 'false', as_of: decision(p, r), limit: '10000' } : { latest: 'false', limit: '10000' },
    ),
  };
}

/** Datasets spread evenly (not by size): each dataset's latency matters to its users. */
function make(n: number, seed: string, datasets: readonly DatasetPlan[], params: (p: DatasetPlan, r: Rng) => Record<string, string>): BenchQuery[] {
  const r = new Rng(seed);
  return Array.from({ length: n }, (): BenchQuery => {
    const p = datasets[r.int(0, datasets.length - 1)]!;
    return { dataset: datasetIdOf(p), params: params(p, r) };
  });
}

/**
 * LOOPS walk-forward loops, each on a random one-series dataset and series from a random
 * start, stepping D by one day; the list interleaves them step by step, the way a farm's
 * loops arrive at the server. n queries in all.
 */
function loops(n: number, seed: string, datasets: readonly DatasetPlan[]): BenchQuery[] {
  const r = new Rng(seed);
  const steps = Math.ceil(n / LOOPS);
  const plans = Array.from({ length: LOOPS }, () => {
    const p = datasets[r.int(0, datasets.length - 1)]!;
    const first = Math.min(p.startDay + WINDOW_DAYS, p.endDay);
    const start = r.int(first, Math.max(first, p.endDay - steps));
    return { p, start, filter: filterOf(p, r.int(0, p.series.length - 1)) };
  });
  const out: BenchQuery[] = [];
  for (let step = 0; out.length < n; step++) {
    for (const { p, start, filter } of plans) {
      if (out.length === n) break;
      const d = Math.min(start + step, p.endDay);
      out.push({ dataset: datasetIdOf(p), params: { date_from: formatDate(d - WINDOW_DAYS), date_to: formatDate(d), as_of: formatDate(d), ...filter } });
    }
  }
  return out;
}

/** A decision date D that leaves a full window of history before it. */
function decision(p: DatasetPlan, r: Rng): string {
  return formatDate(r.int(Math.min(p.startDay + WINDOW_DAYS, p.endDay), p.endDay));
}

function window(p: DatasetPlan, r: Rng): Record<string, string> {
  const d = decision(p, r);
  const from = formatDate(Date.parse(d) / 86_400_000 - WINDOW_DAYS);
  return { date_from: from, date_to: d, as_of: d };
}

/** The product's filters set to one series' key values. */
function filterOf(p: DatasetPlan, s: number): Record<string, string> {
  const keyCols = p.def.keyColumns.map((k) => k.name);
  const out: Record<string, string> = {};
  for (const f of findProduct(p.def.productId)!.filters) out[f.param] = p.series[s]![keyCols.indexOf(f.param)]!;
  return out;
}

/** True when the product's filters cover the whole series key (so one value each = one series). */
function selectsOneSeries(p: DatasetPlan): boolean {
  const filters = new Set(findProduct(p.def.productId)!.filters.map((f) => f.param));
  return seriesKeyOf(p).every((k) => filters.has(k));
}

/** `/product/dataset?k=v&...` exactly as a client would send it. */
export function toPath(q: BenchQuery): string {
  const qs = Object.entries(q.params)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
  return qs === '' ? `/${q.dataset}` : `/${q.dataset}?${qs}`;
}

/** One path per line: the input of the wrk scripts. */
export async function writePathsFile(path: string, queries: readonly BenchQuery[]): Promise<void> {
  await writeFile(path, queries.map(toPath).join('\n') + '\n');
}
