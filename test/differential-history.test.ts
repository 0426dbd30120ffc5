/**
 * Walk-forward (contract 10) and vintages (contract 11) against naive readings of the
 * contract, over random snapshots of every named dataset and of invented datasets of a
 * catalog.json at the source (contract 13) (revisions, ties, floors, every
 * time unit), served by the real server over uWS:
 *
 * - walk_forward equals, decision date by decision date, the reference model's answer to
 *   `date_from=D-window&date_to=D&as_of=D` with the same filters (random windows, steps,
 *   filters, limits; every page of the cursor chain), each row ending with `floor_applied`
 *   (D before the floor day, contract 16); `before_floor` skip drops those decision dates,
 *   error refuses them, and `x-floor-applied` says whether any was asked for;
 * - vintages equal a naive interval sweep (test/support/reference-vintages.ts) for random
 *   ranges, filters, as_of and release, every page;
 * - for random instants T, the vintages rows with visible_from <= T < visible_to are
 *   exactly the server's own `as_of=T` answer.
 *
 * Reproduce a failure with the printed seed: PITCACHE_DIFF_SEED=<seed> npx vitest run test/differential-history.test.ts
 */
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './support/harness.js';
import { INVENTED_KEYS, writeInventedCatalog } from './support/invented-catalog.js';
import { isoDate, randomAsOf, randomFilters } from './support/random-query.js';
import { FLOOR_DATE, Rng, dayOf, generateSnapshot, type GeneratedSnapshot } from './support/random-snapshot.js';
import { micros } from './support/fixtures.js';
import { referenceAnswer, type JsonValue } from './support/reference-model.js';
import { referenceVintages, type VintageParams } from './support/reference-vintages.js';

const BASE_SEED = Number(process.env.PITCACHE_DIFF_SEED ?? 20_261_125);
const QUERIES = Number(process.env.PITCACHE_DIFF_QUERIES ?? 30);
const MAX_PAGES = 20;

const TARGETS = [
  ['gbsi_us', 'system_stress'],
  ['gbsi_us', 'balance_momentum'],
  ['gbsi_eu', 'system_stress'],
  ['pemi', 'grid_stress'],
  ['glmi', 'marginality'],
  ['wrsi', 'forecast_stress'],
  ['wssi_us', 'demand_shock'],
  // contract 13: products of the catalog.json at the source, keys of 2 and 0 columns, every value type
  ['acme_grid', 'load_by_site'],
  ['flatline', 'level'],
] as const;
const snaps = TARGETS.map(([p, d], i) =>
  generateSnapshot((BASE_SEED + i * 7919) >>> 0, p, d, INVENTED_KEYS[p] === undefined ? {} : { seriesKey: INVENTED_KEYS[p], allColumns: true }),
);

type Row = Record<string, JsonValue>;
interface Chain {
  readonly rows: Row[];
  readonly first: { readonly total: number; readonly latest: unknown; readonly age: unknown; readonly floorApplied: string | null };
}

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ datasets: snaps.map((s) => ({ productId: s.productId, dataset: s.dataset, spec: s.spec })), prepare: writeInventedCatalog });
});
afterAll(async () => h?.close());

/** Every page of a chain, checking each page's envelope against the chain's total; throws with the path on a failure. */
async function chain(path: string, limit: number): Promise<Chain> {
  const rows: Row[] = [];
  let cursor: string | null = null;
  let first: Chain['first'] | null = null;
  for (let page = 0; page <= MAX_PAGES + 2; page++) {
    const url = cursor === null ? path : `${path}&cursor=${cursor}`;
    const r = await h.get(url);
    if (r.status !== 200) throw new Error(`${url}: ${r.status} ${r.text.slice(0, 300)}`);
    const b = r.body;
    first ??= {
      total: b.metadata.total_count,
      latest: b.metadata.data_latest_date,
      age: b.metadata.data_age_hours,
      floorApplied: r.headers.get('x-floor-applied'),
    };
    if (r.headers.get('x-floor-applied') !== first.floorApplied) throw new Error(`${url}: x-floor-applied changed between pages of one chain`);
    const remaining = first.total - rows.length;
    const expected = { count: Math.min(limit, remaining), has_more: remaining > limit, total: first.total };
    const actual = { count: b.data.length, has_more: b.has_more, total: b.metadata.total_count };
    if (!isDeepStrictEqual(actual, expected) || b.count !== b.data.length)
      throw new Error(`${url}: page envelope ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
    rows.push(...b.data);
    if (!b.has_more) return { rows, first };
    cursor = b.next_cursor;
  }
  throw new Error(`${path}: the cursor chain did not end`);
}

function firstDifference(got: readonly Row[], want: readonly Row[]): string | null {
  for (let i = 0; i < Math.max(got.length, want.length); i++) {
    if (!isDeepStrictEqual(got[i], want[i]))
      return `row ${i} of ${want.length} (got ${got.length})\n    expected ${JSON.stringify(want[i])}\n    actual   ${JSON.stringify(got[i])}`;
  }
  return null;
}

function filterQuery(filters: Record<string, string>): string[] {
  return Object.entries(filters).map(([k, v]) => `${k}=${v.split(',').map(encodeURIComponent).join(',')}`);
}

/** A page limit that keeps a chain under MAX_PAGES. */
function limitFor(rng: Rng, total: number): number {
  const limit = rng.pick([1, 2, 3, rng.int(1, 60), rng.int(1, 60), 500, 100_000]);
  return Math.ceil(total / limit) > MAX_PAGES ? Math.ceil(total / MAX_PAGES) : limit;
}

describe.each(snaps.map((s) => [`${s.productId}/${s.dataset} (seed ${s.seed}, ${s.rows.length} rows)`, s] as const))('%s', (_name, snap: GeneratedSnapshot) => {
  const base = `/${snap.productId}/${snap.dataset}`;

  it('walk_forward equals the reference answer of every decision date, every page', async () => {
    const rng = new Rng(snap.seed ^ 0x77aa);
    const failures: string[] = [];
    let rows = 0;
    for (let q = 0; q < QUERIES && failures.length < 2; q++) {
      const from = rng.int(snap.firstDay - 10, snap.lastDay + 3);
      const to = from + rng.pick([0, rng.int(0, 10), rng.int(0, 60)]);
      const step = rng.pick([1, 1, 2, 3, 7, rng.int(1, 40)]);
      const window = rng.pick([0, 1, 3, 7, rng.int(0, 40), 90]);
      const filters = randomFilters(rng, snap);
      const beforeFloor = rng.pick([undefined, undefined, 'floor', 'skip', 'error'] as const);
      const floorDay = dayOf(FLOOR_DATE[snap.productId]!);
      const anyBefore = from < floorDay;
      const want: Row[] = [];
      for (let d = from; d <= to; d += step) {
        if (d < floorDay && beforeFloor === 'skip') continue;
        const ref = referenceAnswer(snap, { date_from: isoDate(d - window), date_to: isoDate(d), as_of: isoDate(d), filters }, h.clock.now());
        for (const r of ref.rows) want.push({ decision_date: isoDate(d), ...r, floor_applied: d < floorDay });
      }
      const atEnd = referenceAnswer(snap, { as_of: isoDate(to) }, h.clock.now());
      const limit = limitFor(rng, want.length);
      const params = [
        `decision_from=${isoDate(from)}`,
        `decision_to=${isoDate(to)}`,
        `step=${step}`,
        `window=${window}`,
        `limit=${limit}`,
        ...filterQuery(filters),
        ...(beforeFloor === undefined ? [] : [`before_floor=${beforeFloor}`]),
      ];
      const path = `${base}/walk_forward?${rng.shuffle(params).join('&')}`;
      if (anyBefore && beforeFloor === 'error') {
        const r = await h.get(path);
        const e = r.body?.error;
        if (r.status !== 400 || e?.code !== 'before_floor' || !String(e?.message).includes(FLOOR_DATE[snap.productId]!))
          failures.push(`${path}: expected 400 before_floor naming ${FLOOR_DATE[snap.productId]}, got ${r.status} ${r.text.slice(0, 300)}`);
        continue;
      }
      try {
        const got = await chain(path, limit);
        const diff = firstDifference(got.rows, want);
        if (diff !== null) failures.push(`${path}: ${diff}`);
        if (got.first.total !== want.length) failures.push(`${path}: total_count ${got.first.total}, expected ${want.length}`);
        if (got.first.latest !== atEnd.dataLatestDate) failures.push(`${path}: data_latest_date ${String(got.first.latest)}, expected ${atEnd.dataLatestDate}`);
        const ageOk = atEnd.dataAgeHours === null ? got.first.age === null : Math.abs((got.first.age as number) - atEnd.dataAgeHours) < 1e-6;
        if (!ageOk) failures.push(`${path}: data_age_hours ${String(got.first.age)}, expected ${atEnd.dataAgeHours}`);
        if (got.first.floorApplied !== String(anyBefore))
          failures.push(`${path}: x-floor-applied ${String(got.first.floorApplied)}, expected ${String(anyBefore)}`);
      } catch (e) {
        failures.push(String(e));
      }
      rows += want.length;
    }
    expect(failures, `PITCACHE_DIFF_SEED=${BASE_SEED}\n${failures.join('\n\n')}`).toEqual([]);
    expect(rows).toBeGreaterThan(0);
  }, 120_000);

  it('vintages equal a naive interval sweep, every page', async () => {
    const rng = new Rng(snap.seed ^ 0x3131);
    const failures: string[] = [];
    let rows = 0;
    for (let q = 0; q < QUERIES && failures.length < 2; q++) {
      const p: { -readonly [K in keyof VintageParams]: VintageParams[K] } = {};
      if (rng.chance(0.4)) p.date_from = isoDate(rng.int(snap.firstDay - 3, snap.lastDay));
      if (rng.chance(0.4)) p.date_to = isoDate(rng.int(snap.firstDay, snap.lastDay + 3));
      if (p.date_from !== undefined && p.date_to !== undefined && p.date_from > p.date_to) [p.date_from, p.date_to] = [p.date_to, p.date_from];
      if (rng.chance(0.5)) p.as_of = randomAsOf(rng, snap);
      if (rng.chance(0.3)) p.release = rng.pick(['first', 'all'] as const);
      const filters = randomFilters(rng, snap);
      if (Object.keys(filters).length > 0) p.filters = filters;
      const want = referenceVintages(snap, p);
      const limit = limitFor(rng, want.length);
      const params = [`limit=${limit}`, ...filterQuery(filters)];
      for (const k of ['date_from', 'date_to', 'as_of', 'release'] as const) if (p[k] !== undefined) params.push(`${k}=${encodeURIComponent(p[k])}`);
      const path = `${base}/vintages?${rng.shuffle(params).join('&')}`;
      try {
        const got = await chain(path, limit);
        const diff = firstDifference(got.rows, want);
        if (diff !== null) failures.push(`${path}: ${diff}`);
      } catch (e) {
        failures.push(String(e));
      }
      rows += want.length;
    }
    expect(failures, `PITCACHE_DIFF_SEED=${BASE_SEED}\n${failures.join('\n\n')}`).toEqual([]);
    expect(rows).toBeGreaterThan(0);
  }, 120_000);

  it('for random instants T, the vintages holding T are the as_of=T answer', async () => {
    const all = await chain(`${base}/vintages?limit=100000`, 100_000);
    expect(all.rows.length).toBeGreaterThan(0);
    const rng = new Rng(snap.seed ^ 0x5150);
    for (let q = 0; q < 15; q++) {
      const asOf = randomAsOf(rng, snap);
      const answer = await chain(`${base}?latest=false&limit=10000&as_of=${encodeURIComponent(asOf)}`, 10_000);
      const t = (await h.get(`${base}?latest=false&limit=1&as_of=${encodeURIComponent(asOf)}`)).body.metadata.as_of as string;
      const tUs = micros(t);
      const holding = all.rows
        .filter((r) => micros(r.visible_from as string) <= tUs && (r.visible_to === null || tUs < micros(r.visible_to as string)))
        .map(({ visible_from: _f, visible_to: _t, ...stored }) => stored);
      expect(holding, `as_of=${asOf}`).toEqual(answer.rows);
    }
  }, 120_000);
});
