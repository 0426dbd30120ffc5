/**
 * The resolvers at the boundaries random snapshots rarely reach, against the reference model
 * (support/reference-model.ts, reference-vintages.ts), every page through the cursor chain:
 *
 * - versions visible before their business date (a forecast observed days ahead): a
 *   walk-forward counts and lists such a key only from its date on;
 * - walk-forward grids whose step leaves keys between two decisions' windows (step >
 *   window + 1), exactly touches them (step = window + 1), or overlaps them;
 * - revisions whose thresholds fall back in physical order (a later version effective
 *   before an earlier one's effective time), so the version PIT-4 picks changes more than once per key;
 * - `latest` over a few hundred series whose last dates span more days than the resolver's
 *   first per-day counts hold.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessHarness, type Harness } from './support/harness.js';
import { DAY_US, FLOOR_DATE, dayOf, type GeneratedSnapshot } from './support/random-snapshot.js';
import { referenceAnswer, type RefParams } from './support/reference-model.js';
import { referenceVintages, type VintageParams } from './support/reference-vintages.js';
import { HOUR_US, instant, iso, pageChain, referenceWalk, sameRows, versionDataset, walkPath, type Version, type Walk } from './support/version-dataset.js';

const DAY0 = dayOf('2026-04-01');
const DAYS = 30;
const COUNTRIES = 6;

/** The versions of (country c, day d): the kind cycles with c + d, some days are missing. */
function versionsOf(c: number, d: number): Version[] {
  const day = DAY0 + d;
  const key = `C${c}`;
  const eff = day * DAY_US;
  switch ((c + d) % 7) {
    case 0: // a forecast: effective and observed two days before its date
      return [{ key, day, effUs: eff - 2 * DAY_US + 15 * HOUR_US, obsUs: eff - 2 * DAY_US + 15 * HOUR_US }];
    case 1: // first published two days late
      return [{ key, day, effUs: eff, obsUs: eff + 2 * DAY_US + 3 * HOUR_US }];
    case 2: // revised twice: the second revision is visible before the first (effective three days on)
      return [
        { key, day, effUs: eff, obsUs: eff + 9 * HOUR_US },
        { key, day, effUs: eff + 3 * DAY_US, obsUs: eff + DAY_US + 10 * HOUR_US },
        { key, day, effUs: eff, obsUs: eff + 2 * DAY_US + HOUR_US },
      ];
    case 3: // published at the last microsecond of its day, revised at the last microsecond of the next
      return [
        { key, day, effUs: eff, obsUs: eff + DAY_US - 1 },
        { key, day, effUs: eff, obsUs: eff + 2 * DAY_US - 1 },
      ];
    case 4: // a forecast five days ahead, revised the day after its date
      return [
        { key, day, effUs: eff - 5 * DAY_US, obsUs: eff - 5 * DAY_US + HOUR_US },
        { key, day, effUs: eff, obsUs: eff + DAY_US + 2 * HOUR_US },
      ];
    case 5: // effective at the midnight two days after its date, observed before it: visible from exactly that instant
      return [{ key, day, effUs: eff + 2 * DAY_US, obsUs: eff - 4 * HOUR_US }];
    default:
      return [{ key, day, effUs: eff, obsUs: eff + 9 * HOUR_US }];
  }
}

/** DEEP's one key: 150 versions an hour apart from its date's 06:00 (past the 64 and 128 a key's version list holds before it grows), every fourth effective a day later. */
const DEEP_DAY = DAY0 + 8;
const deep = Array.from({ length: 150 }, (_, i): Version => {
  const obs = DEEP_DAY * DAY_US + (6 + i) * HOUR_US;
  return { key: 'DEEP', day: DEEP_DAY, effUs: i % 4 === 3 ? obs + DAY_US : DEEP_DAY * DAY_US, obsUs: obs };
});

/** FL: daily around gbsi_eu's vintage floor (2026-01-13), so decision dates fall before it, on it and after it. */
const FLOOR_DAY = dayOf(FLOOR_DATE.gbsi_eu!);
const floorKeys = Array.from({ length: 9 }, (_, i): Version => {
  const day = FLOOR_DAY - 4 + i;
  return { key: 'FL', day, effUs: day * DAY_US, obsUs: day * DAY_US + 9 * HOUR_US };
});

const edges = versionDataset('gbsi_eu', 'system_stress', 'country', [
  ...floorKeys,
  ...Array.from({ length: COUNTRIES }, (_, c) => Array.from({ length: DAYS }, (_, d) => ((c * 7 + d) % 9 === 4 ? [] : versionsOf(c, d))).flat()).flat(),
  ...deep,
]);

/**
 * pemi: 600 zones (past the 512 that one doubling of a resolver's first per-series scratch holds), zone i's last date i days after the first, so `latest` spans 600 days
 * over 601 series; and zone LONG, 2,200 daily keys before them all (walk-forward windows
 * of more keys than the first window buffer holds, and a narrow window sliding over
 * more keys than it: the buffer grows, and compacts).
 */
const SPAN_FROM = dayOf('2024-06-01');
const LONG_TO = SPAN_FROM - 2;
const LONG_FROM = LONG_TO - 2199;
const spread = versionDataset('pemi', 'grid_stress', 'bidding_zone', [
  ...Array.from({ length: 600 }, (_, i): Version[] => {
    const key = `Z${String(i).padStart(3, '0')}`;
    const day = SPAN_FROM + i;
    return [
      { key, day: day - 1, effUs: (day - 1) * DAY_US, obsUs: (day - 1) * DAY_US + HOUR_US },
      { key, day, effUs: day * DAY_US, obsUs: day * DAY_US + HOUR_US },
    ];
  }).flat(),
  ...Array.from({ length: 2200 }, (_, i): Version => ({
    key: 'LONG',
    day: LONG_FROM + i,
    effUs: (LONG_FROM + i) * DAY_US,
    obsUs: (LONG_FROM + i) * DAY_US + 9 * HOUR_US,
  })),
]);

describe('resolvers at their boundaries, against the reference model', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startInProcessHarness({ datasets: [edges, spread].map((d) => ({ productId: d.productId, dataset: d.dataset, spec: d.spec })) });
  });
  afterAll(() => h?.close());

  /** The walk in one page and in pages of about a twelfth of it (cursors resume mid-decision). */
  async function walk(w: Walk): Promise<number> {
    const expected = referenceWalk(edges, w, h.clock.now());
    for (const limit of [100_000, Math.max(1, Math.ceil(expected.length / 12))])
      sameRows(`${walkPath(edges, w)} limit ${limit}`, await pageChain(h, walkPath(edges, w), limit), expected);
    return expected.length;
  }

  it('walk-forward: keys visible before their date, between windows, at window edges, revisions whose thresholds fall back', async () => {
    const grids: ReadonlyArray<[step: number, window: number]> = [
      [1, 0],
      [2, 0], // step > window + 1: every other day's keys are in no window
      [3, 1],
      [5, 1],
      [7, 2],
      [4, 3], // step = window + 1: windows touch
      [2, 5],
    ];
    let rows = 0;
    for (const [step, window] of grids) {
      for (const filters of [{}, { country: 'C1' }, { country: 'C0,C3,C5' }] as Array<Record<string, string>>) {
        rows += await walk({ from: DAY0 - 6 + (step % 3), to: DAY0 + DAYS + 4 - (window % 2), step, window, filters });
      }
    }
    expect(rows).toBeGreaterThan(1200);
    // floor_applied: decision dates before the floor day, not on it.
    expect(await walk({ from: FLOOR_DAY - 3, to: FLOOR_DAY + 3, step: 1, window: 1, filters: { country: 'FL' } })).toBe(14);
    // A forecast's key is a row from its own date on, not from the day it became visible.
    const forecastDay = DAY0 + 7; // C0's day 7 is a forecast, visible from its day 5
    const dates = async (to: number) =>
      (await pageChain(h, walkPath(edges, { from: forecastDay - 2, to, step: 1, window: 0, filters: { country: 'C0' } }), 100)).map((r) => r.date);
    expect(await dates(forecastDay - 1)).not.toContain(iso(forecastDay));
    expect(await dates(forecastDay)).toContain(iso(forecastDay));
  });

  it('walk-forward over many series (the date order, through a mask when filtered): every series, then filters of 80 one after another, each its own answer', async () => {
    const zones = (from: number) => Array.from({ length: 80 }, (_, i) => `Z${String(from + 7 * i).padStart(3, '0')}`).join(',');
    // The thread's first walk over pemi is over all 601 series: its per-series scratch must hold them at once.
    let rows = 0;
    for (const filters of [{}, { bidding_zone: zones(0) }, { bidding_zone: zones(1) }, { bidding_zone: `LONG,${zones(2)}` }] as Array<Record<string, string>>) {
      for (const [step, window] of [
        [9, 20],
        [25, 3],
      ] as const) {
        const w = { from: SPAN_FROM - 5, to: SPAN_FROM + 600, step, window, filters };
        const expected = referenceWalk(spread, w, h.clock.now());
        for (const limit of [100_000, Math.max(1, Math.ceil(expected.length / 8))])
          sameRows(`${walkPath(spread, w)} limit ${limit}`, await pageChain(h, walkPath(spread, w), limit), expected);
        rows += expected.length;
      }
    }
    expect(rows).toBeGreaterThan(1000);
  });

  it('walk-forward: a window of 60 keys sliding over 2,200 (the window buffer compacts), then windows of 1,101 and 2,151 keys (it grows twice), from one series and from every series', async () => {
    const long = { bidding_zone: 'LONG' };
    // Compactions first (while the buffer has its first 1,024 entries), then one growth per way in.
    const cases: Walk[] = [
      { from: LONG_FROM + 50, to: LONG_TO + 3, step: 29, window: 60, filters: {} }, // every series: the date order
      { from: LONG_FROM + 50, to: LONG_TO + 3, step: 23, window: 60, filters: long }, // one series: its own run
      { from: LONG_TO - 5, to: LONG_TO, step: 1, window: 1100, filters: long },
      { from: LONG_TO - 3, to: LONG_TO, step: 1, window: 2150, filters: {} },
    ];
    for (const w of cases) {
      const expected = referenceWalk(spread, w, h.clock.now());
      expect(expected.length, walkPath(spread, w)).toBeGreaterThan(4000);
      for (const limit of [100_000, 997]) sameRows(`${walkPath(spread, w)} limit ${limit}`, await pageChain(h, walkPath(spread, w), limit), expected);
    }
  });

  it('vintages: forecasts, revisions visible out of order, with and without as_of, first releases, every page', async () => {
    // The thread's first vintages page is over all 601 series of pemi: its per-series scratch must hold them at once.
    const cases: Array<[GeneratedSnapshot, VintageParams]> = [[spread, { date_from: iso(SPAN_FROM - 3) }]];
    for (const filters of [undefined, { country: 'C2' }, { country: 'C1,C4' }, { country: 'DEEP' }]) {
      for (const as_of of [undefined, instant((DAY0 + 9) * DAY_US + 10 * HOUR_US), iso(DAY0 + 20), instant((DAY0 + 12) * DAY_US - 1)]) {
        for (const release of [undefined, 'first'] as const) {
          cases.push([
            edges,
            {
              ...(filters === undefined ? {} : { filters }),
              ...(as_of === undefined ? {} : { as_of }),
              ...(release === undefined ? {} : { release }),
            },
          ]);
          cases.push([
            edges,
            {
              date_from: iso(DAY0 + 5),
              date_to: iso(DAY0 + 17),
              ...(filters === undefined ? {} : { filters }),
              ...(as_of === undefined ? {} : { as_of }),
            },
          ]);
        }
      }
    }
    let rows = 0;
    for (const [ds, p] of cases) {
      const q = [
        ...Object.entries(p.filters ?? {}),
        ...(['date_from', 'date_to', 'as_of', 'release'] as const).filter((k) => p[k] !== undefined).map((k) => [k, p[k]!]),
      ];
      const path = `/${ds.productId}/${ds.dataset}/vintages?${q.map(([k, v]) => `${k}=${encodeURIComponent(v!)}`).join('&')}`;
      const expected = referenceVintages(ds, p);
      for (const limit of [100_000, Math.max(1, Math.ceil(expected.length / 10)), ...(p.filters?.country === 'DEEP' ? [2] : [])])
        sameRows(`${path} limit ${limit}`, await pageChain(h, path, limit), expected);
      rows += expected.length;
    }
    expect(rows).toBeGreaterThan(2000);
  });

  it('latest over 601 series whose last dates span 600 days, then fewer: each in (date, series) order', async () => {
    const rowsLike = async (ds: GeneratedSnapshot, p: RefParams, limit: number) => {
      const q = Object.entries({ ...p, ...p.filters, filters: undefined }).filter(([, v]) => v !== undefined);
      const path = `/${ds.productId}/${ds.dataset}?${q.map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`).join('&')}`;
      const expected = referenceAnswer(ds, p, h.clock.now()).rows;
      sameRows(path, await pageChain(h, path, limit), expected);
      return expected.length;
    };
    expect(await rowsLike(spread, { latest: 'true' }, 10_000)).toBe(601);
    expect(await rowsLike(spread, { latest: 'true' }, 17)).toBe(601);
    expect(await rowsLike(spread, { latest: 'true', date_to: iso(SPAN_FROM + 300) }, 10_000)).toBe(303);
    expect(await rowsLike(spread, { latest: 'true', as_of: iso(SPAN_FROM + 450) }, 33)).toBe(453);
    expect(await rowsLike(edges, { latest: 'true' }, 10_000)).toBe(COUNTRIES + 2);
    expect(await rowsLike(edges, { latest: 'true', as_of: iso(DAY0 + 10) }, 2)).toBe(COUNTRIES + 2);
  });
});
