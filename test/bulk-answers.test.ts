/**
 * The bulk answers (docs/decisions.md#date-order): every series of a dataset page by page
 * (latest=false, with and without as_of, early as_of whose chains end long before the
 * history does), every series in a date window with as_of at its end, the latest row of
 * every series, walk_forward over every series (each decision date asked as a query of the
 * model), and filters selecting many series or a few, over random data with
 * thousands of series, revisions and ties. Every page of every cursor chain is compared in
 * JSON with the naive reference model, and in CSV and Arrow (csv-parse, apache-arrow) cell
 * by cell with the JSON page; a chain goes on with the cursor another format gave. These
 * are the answers read from a generation's (date, series) order and per-series last keys
 * (page-resolver.ts, walk-forward-resolver.ts), so the model, which shares no code with them, checks that order.
 * Reproduce with PITCACHE_BULK_SEED=<seed>.
 */
import { isDeepStrictEqual } from 'node:util';
import { tableFromIPC } from 'apache-arrow';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY, startHarness, type Harness } from './support/harness.js';
import { csvText, fromArrow, type Json } from './support/format-cells.js';
import { isoDate } from './support/random-query.js';
import { FLOOR_DATE, Rng, dayOf, generateSnapshot, type GeneratedSnapshot } from './support/random-snapshot.js';
import { referenceAnswer, type RefAnswer, type RefParams } from './support/reference-model.js';

const SEED = Number(process.env.PITCACHE_BULK_SEED ?? 39_039);
/** pages per chain, about: the limit is set from the expected total */
const PAGES = 12;

const TARGETS = [
  { productId: 'wssi_us', dataset: 'demand_shock', series: 2500 },
  { productId: 'pemi', dataset: 'grid_stress', series: 1200 },
] as const;
const snaps = TARGETS.map((t, i) => generateSnapshot((SEED + i * 104_729) >>> 0, t.productId, t.dataset, { series: t.series }));

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ datasets: snaps.map((s) => ({ productId: s.productId, dataset: s.dataset, spec: s.spec })) });
}, 120_000);
afterAll(async () => h?.close());

/** The bulk queries of one snapshot: every series, a window, latest, and filters selecting many series and few. */
function bulkQueries(rng: Rng, snap: GeneratedSnapshot): RefParams[] {
  const instant = (): string => new Date(rng.pick(snap.instantsUs) / 1000).toISOString();
  const early = isoDate(snap.firstDay + rng.int(0, 3));
  const d = rng.int(snap.firstDay + 5, snap.lastDay);
  // A filter column whose pool is wide: a run of its values selects a share of the series.
  const column = Object.keys(snap.keyPools).find((k) => k !== 'tenor' && k !== 'hub')!;
  const pool = snap.keyPools[column]!.filter((v) => v !== '');
  const many = pool.slice(0, Math.ceil(pool.length / 3)).join(',');
  const few = rng
    .shuffle([...pool])
    .slice(0, 3)
    .join(',');
  return [
    { latest: 'false' },
    { latest: 'false', as_of: early },
    { latest: 'false', as_of: instant() },
    { date_from: isoDate(d - 5), date_to: isoDate(d), as_of: isoDate(d) },
    { date_from: isoDate(d - 2), as_of: instant() },
    { latest: 'true' },
    { latest: 'true', as_of: instant() },
    { date_to: isoDate(d), as_of: instant() },
    { latest: 'true', as_of: early },
    { latest: 'false', filters: { [column]: many } },
    { latest: 'false', as_of: instant(), filters: { [column]: many } },
    { date_from: isoDate(d - 5), date_to: isoDate(d), as_of: isoDate(d), filters: { [column]: many } },
    { latest: 'false', as_of: instant(), filters: { [column]: few } },
    { latest: 'true', as_of: instant(), filters: { [column]: many } },
  ];
}

function queryString(p: RefParams, limit: number): string {
  const parts: string[] = [];
  for (const k of ['latest', 'date_from', 'date_to', 'as_of'] as const) if (p[k] !== undefined) parts.push(`${k}=${encodeURIComponent(p[k])}`);
  for (const [k, v] of Object.entries(p.filters ?? {})) parts.push(`${k}=${v.split(',').map(encodeURIComponent).join(',')}`);
  parts.push(`limit=${limit}`);
  return parts.join('&');
}

async function get(path: string): Promise<Response> {
  return fetch(h.url + path, { headers: { 'x-api-key': TEST_KEY, 'accept-encoding': 'identity' } });
}

interface Envelope {
  count: number;
  has_more: boolean;
  next_cursor?: string;
  data: Array<Record<string, Json>>;
  metadata: { total_count: number; data_latest_date: string | null };
}

/** What a chain must serve: every row in order, the total, and (a data query's) data_latest_date. */
type Expected = Pick<RefAnswer, 'rows' | 'totalCount'> & { readonly dataLatestDate?: string | null };

/** Follows the chain of `base` (a path and its query) in all three formats, against `exp`; the first disagreement, or null. */
async function checkChain(base: string, names: readonly string[], limit: number, exp: Expected, rng: Rng): Promise<string | null> {
  let cursor: string | null = null;
  let served = 0;
  for (let page = 0; ; page++) {
    if (page > PAGES * 3) return `the chain did not end after ${page} pages`;
    const path = cursor === null ? base : `${base}&cursor=${cursor}`;
    const at = `page ${page} of ${path}`;
    const jr = await get(path);
    if (jr.status !== 200) return `${at}: status ${jr.status}: ${(await jr.text()).slice(0, 300)}`;
    const env = (await jr.json()) as Envelope;
    const want = exp.rows.slice(served, served + limit);
    if (env.metadata.total_count !== exp.totalCount) return `${at}: total_count ${env.metadata.total_count}, expected ${exp.totalCount}`;
    if (exp.dataLatestDate !== undefined && env.metadata.data_latest_date !== exp.dataLatestDate)
      return `${at}: data_latest_date ${env.metadata.data_latest_date}, expected ${exp.dataLatestDate}`;
    if (env.count !== want.length || env.has_more !== served + want.length < exp.totalCount) {
      return `${at}: count ${env.count}, has_more ${env.has_more}; expected ${want.length} of ${exp.totalCount} after ${served}`;
    }
    for (let i = 0; i < want.length; i++) {
      // As text: the model keeps a stored -0, which JSON writes as 0 (format/bytes/format-float.ts).
      if (JSON.stringify(env.data[i]) !== JSON.stringify(want[i]))
        return `${at}: row ${served + i}\n  expected ${JSON.stringify(want[i])}\n  actual   ${JSON.stringify(env.data[i])}`;
    }

    const cr = await get(`${path}&format=csv`);
    const [header, ...records] = parse(await cr.text(), { relax_column_count: false }) as string[][];
    if (!isDeepStrictEqual(header, names)) return `${at} csv: header ${JSON.stringify(header)}`;
    const csvWant = env.data.map((row) => names.map((n) => csvText(row[n]!)));
    if (!isDeepStrictEqual(records, csvWant)) return `${at} csv: rows differ from the json page (${records.length} vs ${csvWant.length} rows)`;

    const ar = await get(`${path}&format=arrow`);
    const table = tableFromIPC(Buffer.from(await ar.arrayBuffer()));
    if (table.numRows !== env.count) return `${at} arrow: ${table.numRows} rows, json ${env.count}`;
    for (const f of table.schema.fields) {
      const child = table.getChild(f.name)!;
      const type = String(f.type);
      for (let i = 0; i < env.count; i++) {
        const json = env.data[i]![f.name]!;
        const got = fromArrow(child.get(i), type, json);
        if (!isDeepStrictEqual(got, json) && !(got === 0 && json === 0))
          return `${at} arrow: row ${i} ${f.name} is ${JSON.stringify(got)}, json ${JSON.stringify(json)}`;
      }
    }

    const next = [env.next_cursor ?? null, cr.headers.get('x-next-cursor'), ar.headers.get('x-next-cursor')];
    if (next[1] !== next[0] || next[2] !== next[0]) return `${at}: next cursors differ by format: ${JSON.stringify(next)}`;
    served += env.count;
    if (!env.has_more) break;
    cursor = rng.pick(next as string[]);
  }
  return served === exp.totalCount ? null : `the chain served ${served} rows, expected ${exp.totalCount}`;
}

describe.each(snaps.map((s) => [`${s.productId}/${s.dataset}`, s] as const))('bulk answers of %s (seed ' + SEED + ')', (_name, snap) => {
  it(`every page of every chain equals the reference model, in json, csv and arrow`, async () => {
    const rng = new Rng(snap.seed ^ 0x39);
    const seriesCount = new Set(snap.rows.map((r) => snap.seriesKey.map((k) => r[k]).join('\u0000'))).size;
    expect(seriesCount, 'thousands of series').toBeGreaterThan(1000);
    const failures: string[] = [];
    let rows = 0;
    for (const params of bulkQueries(rng, snap)) {
      const exp = referenceAnswer(snap, params, h.clock.now());
      const limit = Math.max(1, Math.ceil(exp.totalCount / PAGES) + rng.int(-3, 3));
      const base = `/${snap.productId}/${snap.dataset}?${queryString(params, limit)}`;
      const failure = await checkChain(
        base,
        snap.columns.map((c) => c.name),
        limit,
        exp,
        rng,
      );
      if (failure !== null) failures.push(`${JSON.stringify(params)} limit ${limit}: ${failure}`);
      rows += exp.totalCount;
    }
    expect(failures, failures.join('\n\n')).toEqual([]);
    expect(rows).toBeGreaterThan(10_000);
  }, 300_000);

  it('walk_forward over every series, and over a filter selecting many: every page equals each decision date asked as a query', async () => {
    const rng = new Rng(snap.seed ^ 0x3939);
    const column = Object.keys(snap.keyPools).find((k) => k !== 'tenor' && k !== 'hub')!;
    const pool = snap.keyPools[column]!.filter((v) => v !== '');
    const floorDay = dayOf(FLOOR_DATE[snap.productId]!);
    const names = ['decision_date', ...snap.columns.map((c) => c.name), 'floor_applied'];
    const failures: string[] = [];
    let rows = 0;
    const walks = [
      // across the vintage floor, windows that overlap, a step that skips days, a window of the decision date alone
      { from: floorDay - 3, to: floorDay + 3, step: 1, window: 3, filters: {} },
      { from: snap.firstDay + 2, to: snap.lastDay + 1, step: 5, window: 7, filters: {} },
      { from: snap.lastDay - 4, to: snap.lastDay, step: 2, window: 0, filters: {} },
      { from: floorDay - 2, to: floorDay + 4, step: 1, window: 4, filters: { [column]: pool.slice(0, Math.ceil(pool.length / 3)).join(',') } },
    ];
    for (const w of walks) {
      const expected: Array<Record<string, Json>> = [];
      for (let d = w.from; d <= w.to; d += w.step) {
        const p: RefParams = { latest: 'false', date_from: isoDate(d - w.window), date_to: isoDate(d), as_of: isoDate(d), filters: w.filters };
        for (const row of referenceAnswer(snap, p, h.clock.now()).rows) expected.push({ decision_date: isoDate(d), ...row, floor_applied: d < floorDay });
      }
      const limit = Math.max(1, Math.ceil(expected.length / PAGES) + rng.int(-3, 3));
      const f = Object.entries(w.filters).map(([k, v]) => `&${k}=${v.split(',').map(encodeURIComponent).join(',')}`);
      const base = `/${snap.productId}/${snap.dataset}/walk_forward?decision_from=${isoDate(w.from)}&decision_to=${isoDate(w.to)}&step=${w.step}&window=${w.window}${f.join('')}&limit=${limit}`;
      const failure = await checkChain(base, names, limit, { rows: expected, totalCount: expected.length }, rng);
      if (failure !== null) failures.push(`${base}: ${failure}`);
      rows += expected.length;
    }
    expect(failures, failures.join('\n\n')).toEqual([]);
    expect(rows).toBeGreaterThan(10_000);
  }, 300_000);
});
