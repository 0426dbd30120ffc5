/**
 * Parity check of the SQL alternatives: small seeded snapshots from the differential test's
 * generator (revisions, observed-time ties, full ties decided by position, pre-floor history,
 * Date32 effective times, UTF-8 vs UTF-16 order traps), loaded through the same setup() as the
 * bench, queried with the bench's SQL, and compared row by row with the test suite's naive
 * reference model of the contract. Pages are walked by keyset with a small limit, so the page
 * walk is checked too.
 *
 * Run: `npx tsx bench/alternatives/duckdb-postgres-check.ts [duckdb|postgres|all] [seeds]`
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Alternative, BenchColumn, BenchColumnType, BenchData, BenchDataset } from './types.js';
import type { CanonicalRow, KeysetAfter, PageFetcher } from './duckdb-postgres-plan.js';
import { DAY_US, formatDay, formatUs, parseDay, parseUtcUs, storedType } from './duckdb-postgres-plan.js';
import type { ColumnDef, GeneratedSnapshot, Row } from '../../test/support/random-snapshot.js';
import { FLOOR_DATE, PRODUCT_FILTERS, Rng, generateSnapshot } from '../../test/support/random-snapshot.js';
import type { RefParams } from '../../test/support/reference-model.js';
import { referenceAnswer } from '../../test/support/reference-model.js';

const PRODUCTS = ['gbsi_us', 'gbsi_eu', 'pemi', 'glmi', 'wrsi', 'wssi_us'];
const UNIT_US = { s: 1_000_000, ms: 1_000, us: 1 } as const;

interface CheckSet {
  readonly snap: GeneratedSnapshot;
  readonly ds: BenchDataset;
  readonly kept: readonly ColumnDef[];
}

export interface ParityReport {
  readonly datasets: number;
  readonly queries: number;
  readonly pages: number;
  readonly rows: number;
  readonly failures: readonly string[];
}

/** Bench types for the snapshot's columns; types the bench generator never makes are left out. */
function benchType(c: ColumnDef): BenchColumnType | null {
  if (c.name === 'note') return null; // NUL characters: PostgreSQL text cannot hold them
  switch (c.type) {
    case 'dict-utf8':
    case 'utf8':
      return 'utf8';
    case 'int8':
    case 'int16':
    case 'int32':
    case 'uint8':
    case 'uint16':
      return 'int32';
    case 'date32':
    case 'timestamp':
    case 'float64':
    case 'float32':
    case 'bool':
      return c.type;
    default:
      return null;
  }
}

function csvCell(c: ColumnDef, v: Row[string]): string {
  if (v === null || v === undefined) return '';
  if (c.type === 'date32') return c.name === 'str_effective_at' ? formatUs(Number(v) * DAY_US) : formatDay(Number(v));
  if (c.type === 'timestamp') return formatUs(Number(v) * UNIT_US[c.unit ?? 'us']);
  if (typeof v === 'string') return '"' + v.replaceAll('"', '""') + '"';
  if (typeof v === 'number' && !Number.isFinite(v)) return Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
  return String(v);
}

function makeSet(dir: string, seed: number, productId: string): CheckSet {
  const snap = generateSnapshot(seed, productId, `check_${seed}`);
  const kept = snap.columns.filter((c) => benchType(c) !== null);
  const columns: BenchColumn[] = kept.map((c) => ({ name: c.name, type: benchType(c)! }));
  const path = join(dir, `${productId}-${seed}.csv`);
  const lines = [kept.map((c) => c.name).join(',')];
  for (const row of snap.rows) lines.push(kept.map((c) => csvCell(c, row[c.name] ?? null)).join(','));
  writeFileSync(path, lines.join('\n') + '\n');
  const ds: BenchDataset = {
    id: `${productId}/${snap.dataset}`,
    productId,
    dataset: snap.dataset,
    seriesKey: snap.seriesKey,
    columns,
    filters: PRODUCT_FILTERS[productId]!,
    floorDate: FLOOR_DATE[productId]!,
    rows: snap.rows.length,
    arrowPath: '',
    arrowBytes: 0,
    csvPath: () => Promise.resolve(path),
    batches: () => {
      throw new Error('the parity check loads from CSV only');
    },
  };
  return { snap, ds, kept };
}

/** Walk-forward windows, whole-dataset windows, latest with and without bounds, at as_of values around the floor and exact stored instants. */
function queriesFor(set: CheckSet, rng: Rng): Record<string, string>[] {
  const { snap, ds } = set;
  const floorDay = parseDay(ds.floorDate);
  const asOfs: (string | undefined)[] = [undefined, formatDay(floorDay - 5), ds.floorDate];
  for (let i = 0; i < 3; i++) asOfs.push(formatDay(rng.int(snap.firstDay, snap.lastDay + 4)));
  for (let i = 0; i < 3; i++) {
    const us = rng.pick(snap.instantsUs);
    asOfs.push(formatUs(us), formatUs(us - 1));
  }
  const out: Record<string, string>[] = [];
  for (const asOf of asOfs) {
    const base: Record<string, string> = asOf === undefined ? {} : { as_of: asOf };
    const d = rng.int(snap.firstDay, snap.lastDay + 2);
    const window = { date_from: formatDay(d - rng.int(0, 30)), date_to: formatDay(d) };
    const row = rng.pick(snap.rows);
    const one: Record<string, string> = {};
    for (const f of ds.filters) one[f] = String(row[f]);
    const two: Record<string, string> = {};
    for (const f of ds.filters.slice(0, 1)) two[f] = [String(row[f]), String(rng.pick(snap.rows)[f])].join(',');
    out.push({ ...base, ...one, ...window, limit: '10000' });
    out.push({ ...base, ...window, limit: String(rng.int(1, 9)) });
    out.push({ ...base, ...two, ...window, limit: '10000' });
    out.push({ ...base, limit: '10000' });
    out.push({ ...base, ...one, date_to: window.date_to, limit: '3' });
    out.push({ ...base, latest: 'false', limit: String(rng.int(1, 9)) });
    out.push({ ...base, latest: 'false', date_to: window.date_to, ...two, limit: '10000' });
  }
  return out;
}

function canonicalReference(set: CheckSet, rendered: Record<string, unknown>): CanonicalRow {
  const row: CanonicalRow = {};
  for (const c of set.ds.columns) {
    const v = rendered[c.name] ?? null;
    const t = storedType(c);
    if (v === null) row[c.name] = null;
    else if (t === 'timestamp') row[c.name] = /^\d{4}-\d{2}-\d{2}$/.test(String(v)) ? parseDay(String(v)) * DAY_US : parseUtcUs(String(v));
    else if (t === 'float32') row[c.name] = Math.fround(Number(v));
    else row[c.name] = v as CanonicalRow[string];
  }
  return row;
}

export async function runParityCheck(alt: Alternative & PageFetcher, seeds: readonly number[]): Promise<ParityReport> {
  const dir = mkdtempSync(join(tmpdir(), 'pitcache-sql-parity-'));
  const failures: string[] = [];
  let queries = 0;
  let pages = 0;
  let rows = 0;
  try {
    const sets = seeds.map((seed, i) => makeSet(dir, seed, PRODUCTS[i % PRODUCTS.length]!));
    const data: BenchData = {
      name: 'sql-parity',
      sourceDir: dir,
      keysPath: '',
      apiKey: '',
      adminKey: '',
      datasets: sets.map((s) => s.ds),
      totalRows: sets.reduce((a, s) => a + s.ds.rows, 0),
      totalArrowBytes: 0,
    };
    await alt.setup(data);
    for (const set of sets) {
      const rng = new Rng(set.snap.seed ^ 0x5eed);
      for (const params of queriesFor(set, rng)) {
        queries++;
        const refParams: Record<string, unknown> = { filters: {} };
        for (const [k, v] of Object.entries(params)) {
          if (set.ds.filters.includes(k)) (refParams.filters as Record<string, string>)[k] = v;
          else if (k !== 'limit') refParams[k] = v;
        }
        const ref = { productId: set.ds.productId, columns: set.snap.columns, seriesKey: set.snap.seriesKey, rows: set.snap.rows };
        const want = referenceAnswer(ref, refParams as RefParams, Date.now()).rows.map((r) => canonicalReference(set, r));
        const q = { dataset: set.ds.id, params };
        const got: CanonicalRow[] = [];
        let after: KeysetAfter | null = null;
        do {
          const page = await alt.fetchPage(q, after);
          pages++;
          got.push(...page.rows);
          after = page.next;
        } while (after !== null && got.length <= want.length);
        rows += got.length;
        const where = `${alt.name} ${set.ds.id} ${JSON.stringify(params)}`;
        const diff = firstDifference(want, got);
        if (diff !== null) failures.push(`${where}: ${diff}`);
        if (alt.totalRows !== undefined) {
          const total = await alt.totalRows(q);
          if (total !== want.length) failures.push(`${where}: totalRows ${total}, reference ${want.length}`);
        }
      }
    }
  } finally {
    await alt.teardown();
    rmSync(dir, { recursive: true, force: true });
  }
  return { datasets: seeds.length, queries, pages, rows, failures };
}

function firstDifference(want: readonly CanonicalRow[], got: readonly CanonicalRow[]): string | null {
  for (let i = 0; i < Math.max(want.length, got.length); i++) {
    const a = JSON.stringify(want[i] ?? null);
    const b = JSON.stringify(got[i] ?? null);
    if (a !== b) return `row ${i} of ${want.length} (got ${got.length}): want ${a} got ${b}`;
  }
  return null;
}

async function main(): Promise<void> {
  const which = process.argv[2] ?? 'all';
  const count = Number(process.argv[3] ?? 12);
  const seeds = Array.from({ length: count }, (_, i) => 1000 + i * 7919);
  const alts: (Alternative & PageFetcher)[] = [];
  if (which === 'duckdb' || which === 'all') alts.push((await import('./duckdb.js')).createDuckDbAlternative());
  if (which === 'postgres' || which === 'all') alts.push((await import('./postgres.js')).createPostgresAlternative());
  let failed = 0;
  for (const alt of alts) {
    const ok = await alt.available();
    if (!ok.ok) {
      console.log(`${alt.name}: skipped (${ok.reason})`);
      continue;
    }
    const r = await runParityCheck(alt, seeds);
    console.log(`${alt.name}: ${r.datasets} datasets, ${r.queries} queries, ${r.pages} pages, ${r.rows} rows, ${r.failures.length} failures`);
    for (const f of r.failures.slice(0, 10)) console.log('  ' + f);
    failed += r.failures.length;
  }
  process.exitCode = failed === 0 ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
