/**
 * The resolvers' scratch past its first sizes and their boundaries, against the reference
 * model of test/differential.test.ts (support/reference-model.ts, reference-vintages.ts):
 * a dataset of 600 series (past the 512 that doubling the first 256 gives), a key with
 * 300 versions (past the 256 that two doublings of a vintages key list's 64 give), walk-forward windows of
 * 1,800 keys (the window buffer grows past 1,024) and of 120 keys sliding over 60 days
 * (it compacts), pages over fewer series right after larger ones on the same thread
 * (stale scratch must not leak into them), and versions visible exactly at `as_of` or
 * exactly at a decision date's end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessHarness, type Harness } from './support/harness.js';
import { DAY_US, FLOOR_DATE, dayOf, type GeneratedSnapshot } from './support/random-snapshot.js';
import { referenceAnswer, type JsonValue, type RefParams } from './support/reference-model.js';
import { referenceVintages, type VintageParams } from './support/reference-vintages.js';
import { HOUR_US, instant, pageChain, referenceWalk, sameRows, versionDataset as dataset, walkPath, type Version } from './support/version-dataset.js';

const zone = (i: number): string => `Z${String(i).padStart(3, '0')}`;

/** pemi: 600 zones over four days, every fifth zone revised a day later, every seventh first published a day late, every eleventh tied. */
const WIDE_DAYS = [dayOf('2026-03-10'), dayOf('2026-03-11'), dayOf('2026-03-12'), dayOf('2026-03-13')];
const wide = dataset(
  'pemi',
  'grid_stress',
  'bidding_zone',
  WIDE_DAYS.flatMap((day) =>
    Array.from({ length: 600 }, (_, z): Version[] => {
      const first = day * DAY_US + (6 + (z % 7)) * HOUR_US + (z % 7 === 0 ? DAY_US : 0);
      const v: Version[] = [{ key: zone(z), day, effUs: day * DAY_US, obsUs: first }];
      if (z % 5 === 0) v.push({ key: zone(z), day, effUs: day * DAY_US, obsUs: first + DAY_US + z });
      // A tie on observed: the later ingested replaces the first at once (it is never the answer alone).
      if (z % 11 === 0) v.push({ key: zone(z), day, effUs: day * DAY_US, obsUs: first, ingUs: first + 1000 });
      return v;
    }).flat(),
  ),
);

/**
 * gbsi_eu: 30 countries daily for 60 days (a few first published exactly at their day's
 * last microsecond, a few a day late), and DE's 2026-01-20 in 300 versions an hour apart.
 */
const LONG_FROM = dayOf('2026-02-01');
const DEEP_DAY = dayOf('2026-01-20');
const FLOOR_DAY = dayOf(FLOOR_DATE.gbsi_eu!);
const long = dataset('gbsi_eu', 'system_stress', 'country', [
  ...Array.from({ length: 60 }, (_, d) =>
    Array.from({ length: 30 }, (_, c): Version => {
      const day = LONG_FROM + d;
      const late = (c + d) % 11 === 0 ? DAY_US : 0;
      const obs = (c + d) % 7 === 0 ? (day + 1) * DAY_US - 1 : day * DAY_US + 9 * HOUR_US + late;
      return { key: `C${String(c).padStart(2, '0')}`, day, effUs: day * DAY_US, obsUs: obs };
    }),
  ).flat(),
  // FL around the vintage floor (2026-01-13): decision dates before it have floor_applied.
  ...Array.from({ length: 7 }, (_, i): Version => ({
    key: 'FL',
    day: FLOOR_DAY - 3 + i,
    effUs: (FLOOR_DAY - 3 + i) * DAY_US,
    obsUs: (FLOOR_DAY - 3 + i) * DAY_US + 9 * HOUR_US,
  })),
  ...Array.from({ length: 300 }, (_, i): Version => ({
    key: 'DE',
    day: DEEP_DAY,
    effUs: DEEP_DAY * DAY_US,
    obsUs: DEEP_DAY * DAY_US + (i + 1) * HOUR_US,
    ingUs: 0,
  })),
]);

describe('resolvers past their first scratch sizes, against the reference model', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startInProcessHarness({ datasets: [wide, long].map((d) => ({ productId: d.productId, dataset: d.dataset, spec: d.spec })) });
  });
  afterAll(() => h?.close());

  const chain = (path: string, limit: number) => pageChain(h, path, limit);
  const same = sameRows;

  async function rowsLike(ds: GeneratedSnapshot, p: RefParams, limit = 10_000): Promise<number> {
    const q = Object.entries({ ...p, ...p.filters, filters: undefined }).filter(([, v]) => v !== undefined);
    const path = `/${ds.productId}/${ds.dataset}?${q.map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`).join('&')}`;
    const expected = referenceAnswer(ds, p, h.clock.now()).rows;
    same(path, await chain(path, limit), expected);
    return expected.length;
  }

  it('range and latest pages over 600 series, then over fewer on the same thread: each is its own answer', async () => {
    const zones = (n: number, from = 0): string => Array.from({ length: n }, (_, i) => zone(from + i * 3)).join(',');
    const asOf = instant(WIDE_DAYS[2]! * DAY_US + 9 * HOUR_US);
    const range = { latest: 'false', date_from: '2026-03-10', date_to: '2026-03-13' };
    // Largest first, then each smaller (heap, then sweep, then one series), then larger again.
    const sizes = [600, 40, 20, 17, 16, 5, 2, 1, 60, 18, 1];
    // The thread's first page is over all 600 series: its per-series scratch must hold them at once (one doubling of 256 does not).
    let rows = await rowsLike(wide, { latest: 'true', as_of: asOf });
    for (const n of sizes) {
      const filters = n === 600 ? undefined : { bidding_zone: zones(n, n % 3) };
      rows += await rowsLike(wide, { ...range, ...(filters === undefined ? {} : { filters }) });
      rows += await rowsLike(wide, { ...range, as_of: asOf, ...(filters === undefined ? {} : { filters }) });
      rows += await rowsLike(wide, { latest: 'true', as_of: asOf, ...(filters === undefined ? {} : { filters }) });
      // Pages smaller than the answer: the heap (17 to 74 of the 600) stops at a full page and resumes.
      if (filters !== undefined && n > 16) await rowsLike(wide, { ...range, as_of: asOf, filters }, 7);
      rows += await rowsLike(wide, { latest: 'true', ...(filters === undefined ? {} : { filters }) }, 7);
    }
    expect(rows).toBeGreaterThan(5000);
    // Chains over every series (the heap), a few (the sweep) and one, pages cut mid-date; every row without date bounds.
    await rowsLike(wide, range, 997);
    await rowsLike(wide, { ...range, as_of: asOf }, 101);
    await rowsLike(wide, { latest: 'false' }, 1009);
    await rowsLike(wide, { latest: 'false', as_of: asOf }, 10_000);
    await rowsLike(wide, { ...range, filters: { bidding_zone: zones(5) } }, 3);
    await rowsLike(wide, { ...range, as_of: asOf, filters: { bidding_zone: zones(5, 1) } }, 2);
    await rowsLike(wide, { ...range, filters: { bidding_zone: 'Z010' } }, 1);
    await rowsLike(wide, { ...range, as_of: asOf, filters: { bidding_zone: 'Z011' } }, 1);
    await rowsLike(wide, { latest: 'true', date_to: '2026-03-12' }, 251);
    await rowsLike(wide, { latest: 'true', as_of: asOf, filters: { bidding_zone: zones(5) } }, 2);
  });

  it('a version visible exactly at as_of is in the answer; a microsecond earlier it is not (one series, a few, many, latest)', async () => {
    // Z007's first version of 2026-03-11: published a day late, at 06:00 on 2026-03-12.
    const exact = WIDE_DAYS[1]! * DAY_US + 6 * HOUR_US + DAY_US;
    for (const filters of [{ bidding_zone: 'Z007' }, { bidding_zone: 'Z007,Z008' }, { bidding_zone: zones20() }]) {
      for (const [asOf, present] of [
        [exact, true],
        [exact - 1, false],
      ] as const) {
        const p = { latest: 'false', date_from: '2026-03-11', date_to: '2026-03-11', as_of: instant(asOf), filters };
        const got = (
          await h.get(`/pemi/grid_stress?latest=false&date_from=2026-03-11&date_to=2026-03-11&as_of=${instant(asOf)}&bidding_zone=${filters.bidding_zone}`)
        ).body.data as Array<Record<string, JsonValue>>;
        expect(
          got.some((r) => r.bidding_zone === 'Z007'),
          `${filters.bidding_zone} as of ${instant(asOf)}`,
        ).toBe(present);
        same(`${JSON.stringify(p)}`, got, referenceAnswer(wide, p, h.clock.now()).rows);
      }
    }
    // The count of a first page that is full (so the rest is counted apart) has it too.
    for (const filters of ['Z007,Z008', zones20()]) {
      const total = async (asOf: number) =>
        (await h.get(`/pemi/grid_stress?latest=false&date_from=2026-03-11&date_to=2026-03-13&as_of=${instant(asOf)}&bidding_zone=${filters}&limit=1`)).body
          .metadata.total_count as number;
      const p = (asOf: number) => ({
        latest: 'false',
        date_from: '2026-03-11',
        date_to: '2026-03-13',
        as_of: instant(asOf),
        filters: { bidding_zone: filters },
      });
      expect(await total(exact)).toBe(referenceAnswer(wide, p(exact), h.clock.now()).totalCount);
      expect(await total(exact - 1)).toBe(referenceAnswer(wide, p(exact - 1), h.clock.now()).totalCount);
      expect(await total(exact)).toBeGreaterThan(await total(exact - 1));
    }
    const latest = (asOf: number) => h.get(`/pemi/grid_stress?latest=true&date_to=2026-03-11&as_of=${instant(asOf)}&bidding_zone=Z007`);
    expect((await latest(exact)).body.data[0].date).toBe('2026-03-11');
    expect((await latest(exact - 1)).body.data[0].date).toBe('2026-03-10');
  });

  it('walk-forward: windows of 1,800 keys (the window grows) and 60 days of a 120-key window (it compacts), against each decision date as a query', async () => {
    const walk = async (ds: GeneratedSnapshot, from: number, to: number, step: number, window: number, filters: Record<string, string>, limit: number) => {
      const w = { from, to, step, window, filters };
      const expected = referenceWalk(ds, w, h.clock.now());
      same(walkPath(ds, w), await chain(walkPath(ds, w), limit), expected);
      return expected.length;
    };
    // The 120-key window first: it compacts while the buffer has its first 1,024 entries (the wide one grows it for good).
    expect(await walk(long, LONG_FROM, LONG_FROM + 59, 1, 3, {}, 100_000)).toBeGreaterThan(6000);
    expect(await walk(long, LONG_FROM - 2, LONG_FROM + 61, 2, 5, {}, 1013)).toBeGreaterThan(5000);
    expect(await walk(wide, WIDE_DAYS[0]! - 1, WIDE_DAYS[3]! + 2, 1, 2, {}, 100_000)).toBeGreaterThan(5000);
    expect(await walk(wide, WIDE_DAYS[0]!, WIDE_DAYS[3]!, 1, 3, {}, 1499)).toBeGreaterThan(5000);
    expect(await walk(long, LONG_FROM, LONG_FROM + 59, 1, 0, { country: 'C07' }, 100_000)).toBeGreaterThan(30);
    expect(await walk(long, FLOOR_DAY - 4, FLOOR_DAY + 4, 1, 1, { country: 'FL' }, 100_000)).toBe(14);
    // DE's key of 300 versions sits in ten decisions' windows: each takes the version published by its day's end.
    expect(await walk(long, DEEP_DAY - 1, DEEP_DAY + 9, 1, 10, { country: 'DE' }, 3)).toBe(10);
  });

  it('vintages: a key of 300 versions, 600 series, with and without as_of, first releases, through cursor chains', async () => {
    const vintages = async (ds: GeneratedSnapshot, p: VintageParams, limit: number) => {
      const q = [
        ...Object.entries(p.filters ?? {}),
        ...(['date_from', 'date_to', 'as_of', 'release'] as const).filter((k) => p[k] !== undefined).map((k) => [k, p[k]!]),
      ];
      const path = `/${ds.productId}/${ds.dataset}/vintages?${q.map(([k, v]) => `${k}=${encodeURIComponent(v!)}`).join('&')}`;
      const expected = referenceVintages(ds, p);
      same(path, await chain(path, limit), expected);
      return expected.length;
    };
    expect(await vintages(long, { filters: { country: 'DE' }, release: 'first' }, 10)).toBe(1); // first: no counting pass lists the key before
    expect(await vintages(long, { filters: { country: 'DE' } }, 100_000)).toBe(300);
    expect(await vintages(long, { filters: { country: 'DE' } }, 7)).toBe(300);
    expect(await vintages(long, { filters: { country: 'DE' }, as_of: instant(DEEP_DAY * DAY_US + 150 * HOUR_US) }, 13)).toBe(150);
    expect(await vintages(long, { filters: { country: 'DE' }, release: 'first' }, 10)).toBe(1);
    expect(await vintages(long, { date_from: '2026-01-20', date_to: '2026-02-03' }, 41)).toBeGreaterThan(250);
    // Every version but the 4 x 55 tied ones replaced at once (never the answer alone).
    expect(await vintages(wide, {}, 100_000)).toBe(wide.rows.length - 4 * 55);
    expect(await vintages(wide, { as_of: instant(WIDE_DAYS[2]! * DAY_US + 9 * HOUR_US) }, 977)).toBeGreaterThan(1000);
    expect(await vintages(wide, { release: 'first', date_from: '2026-03-11' }, 500)).toBe(1800);
  });
});

function zones20(): string {
  return Array.from({ length: 20 }, (_, i) => zone(i === 0 ? 7 : 100 + i)).join(',');
}
