/**
 * A server's first walk-forward and vintages pages, and walks whose decisions follow one
 * another day by day over forecasts and late revisions, against the reference model
 * (support/reference-model.ts, reference-vintages.ts), every page through the cursor chain:
 *
 * - the server here is new, so its first pages of each kind (small limits) are written into
 *   the resolvers' first scratch columns, before any larger page replaced them;
 * - 40 series: a walk over all of them, or over a filter of 20, reads its keys from the
 *   generation's date order (docs/decisions.md#date-order) while decision dates advance a
 *   day at a time, and keys published days before their date (forecasts) must still enter a
 *   decision's window only from their own date on;
 * - a version revised days after its first release, while the next key of its series is
 *   first published in between: a decision in that gap still answers the first release;
 * - range and latest pages: a filter of 20 of the 40 read from the date order through a
 *   mask, one filter after another; three series whose runs end and begin at different
 *   dates merged by sweeping dates; `latest` before a date_to whose series' next key is a
 *   forecast already visible;
 * - vintages in Arrow: `visible_to` is null (not a time) for the version still the answer,
 *   with and without as_of, as in JSON (where a non-finite time is written null anyway).
 */
import { tableFromIPC } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY, startHarness, type Harness } from './support/harness.js';
import { DAY_US, dayOf } from './support/random-snapshot.js';
import { referenceAnswer, type RefParams } from './support/reference-model.js';
import { referenceVintages, type VintageParams } from './support/reference-vintages.js';
import { HOUR_US, instant, iso, pageChain, referenceWalk, sameRows, versionDataset, walkPath, type Version, type Walk } from './support/version-dataset.js';

const DAY0 = dayOf('2026-05-04');
const DAYS = 20;
const SERIES = 40;
const name = (c: number): string => `S${String(c).padStart(2, '0')}`;

/** The versions of (series c, day d): forecasts, late revisions, plain releases. */
function versionsOf(c: number, d: number): Version[] {
  const key = name(c);
  const day = DAY0 + d;
  const eff = day * DAY_US;
  switch ((c + d) % 5) {
    case 0: // a forecast: visible three days before its date
      return [{ key, day, effUs: eff - 3 * DAY_US + 5 * HOUR_US, obsUs: eff - 3 * DAY_US + 5 * HOUR_US }];
    case 1: // released on its day, revised three days later (the next day's key is released between)
      return [
        { key, day, effUs: eff, obsUs: eff + 9 * HOUR_US },
        { key, day, effUs: eff, obsUs: eff + 3 * DAY_US + 2 * HOUR_US },
      ];
    case 2: // released the day after its date, revised the day after that
      return [
        { key, day, effUs: eff, obsUs: eff + DAY_US + 7 * HOUR_US },
        { key, day, effUs: eff, obsUs: eff + 2 * DAY_US + 8 * HOUR_US },
      ];
    default:
      return [{ key, day, effUs: eff, obsUs: eff + 9 * HOUR_US }];
  }
}

/** S38 ends halfway (its keys stop at day 9), S39 starts there (day 10): runs of different spans side by side. */
const span = (c: number, d: number): boolean => (c === SERIES - 2 ? d < DAYS / 2 : c === SERIES - 1 ? d >= DAYS / 2 : true);
const ds = versionDataset(
  'gbsi_eu',
  'system_stress',
  'country',
  Array.from({ length: SERIES }, (_, c) =>
    Array.from({ length: DAYS }, (_, d) => d)
      .filter((d) => span(c, d))
      .flatMap((d) => versionsOf(c, d)),
  ).flat(),
);
const half = Array.from({ length: SERIES / 2 }, (_, i) => name(2 * i + 1)).join(',');

describe("a new server's first pages, and walks a day at a time, against the reference model", () => {
  let h: Harness;
  beforeAll(async () => {
    // A real server (Arrow bodies are read as bytes), in the test's own thread.
    h = await startHarness({ datasets: [{ productId: ds.productId, dataset: ds.dataset, spec: ds.spec }] });
  });
  afterAll(() => h?.close());

  it('walk-forward: the first pages are small; daily decisions over forecasts and revisions, from every series, 20 and 3', async () => {
    // A small page first: this server has not answered a walk-forward before.
    const first: Walk = { from: DAY0 - 2, to: DAY0 + 3, step: 1, window: 2, filters: {} };
    sameRows(`${walkPath(ds, first)} limit 50`, await pageChain(h, walkPath(ds, first), 50), referenceWalk(ds, first, h.clock.now()));
    let rows = 0;
    for (const [step, window] of [
      [1, 0],
      [1, 2],
      [1, 4],
      [2, 3],
    ] as const) {
      for (const filters of [{}, { country: half }, { country: `${name(1)},${name(2)},${name(3)}` }] as Array<Record<string, string>>) {
        const w: Walk = { from: DAY0 - 4, to: DAY0 + DAYS + 5, step, window, filters };
        const expected = referenceWalk(ds, w, h.clock.now());
        for (const limit of [100_000, Math.ceil(expected.length / 5)])
          sameRows(`${walkPath(ds, w)} limit ${limit}`, await pageChain(h, walkPath(ds, w), limit), expected);
        rows += expected.length;
      }
    }
    expect(rows).toBeGreaterThan(10_000);
  });

  it('vintages: the first pages are small; every series, 20 and 3, with and without as_of, first releases', async () => {
    // A small page first: this server has not answered a vintages query before.
    const firstPath = `/${ds.productId}/${ds.dataset}/vintages?date_from=${iso(DAY0 + 2)}&date_to=${iso(DAY0 + 4)}`;
    sameRows(`${firstPath} limit 20`, await pageChain(h, firstPath, 20), referenceVintages(ds, { date_from: iso(DAY0 + 2), date_to: iso(DAY0 + 4) }));
    let rows = 0;
    for (const filters of [undefined, { country: half }, { country: `${name(1)},${name(2)},${name(3)}` }]) {
      for (const as_of of [undefined, instant((DAY0 + 6) * DAY_US + 8 * HOUR_US), iso(DAY0 + 11)]) {
        for (const release of [undefined, 'first'] as const) {
          const p: VintageParams = {
            date_from: iso(DAY0 + 2),
            ...(filters === undefined ? {} : { filters }),
            ...(as_of === undefined ? {} : { as_of }),
            ...(release === undefined ? {} : { release }),
          };
          const q = [
            ...Object.entries(p.filters ?? {}),
            ...(['date_from', 'as_of', 'release'] as const).filter((k) => p[k] !== undefined).map((k) => [k, p[k]!]),
          ];
          const path = `/${ds.productId}/${ds.dataset}/vintages?${q.map(([k, v]) => `${k}=${encodeURIComponent(v!)}`).join('&')}`;
          const expected = referenceVintages(ds, p);
          for (const limit of [100_000, Math.ceil(expected.length / 5)]) sameRows(`${path} limit ${limit}`, await pageChain(h, path, limit), expected);
          rows += expected.length;
        }
      }
    }
    expect(rows).toBeGreaterThan(2_000);
  });

  it("vintages in Arrow: visible_to is null for the version still the answer, the next version's time for one replaced", async () => {
    const ms = (v: unknown): number | null => (v === null ? null : Date.parse(v as string));
    let nulls = 0;
    for (const as_of of [undefined, instant((DAY0 + 6) * DAY_US + 8 * HOUR_US)]) {
      const p: VintageParams = { date_from: iso(DAY0 + 2), date_to: iso(DAY0 + 9), ...(as_of === undefined ? {} : { as_of }) };
      const path = `/${ds.productId}/${ds.dataset}/vintages?date_from=${p.date_from}&date_to=${p.date_to}${as_of === undefined ? '' : `&as_of=${encodeURIComponent(as_of)}`}&format=arrow&limit=100000`;
      const res = await fetch(h.url + path, { headers: { 'x-api-key': TEST_KEY } });
      expect(res.status, path).toBe(200);
      const t = tableFromIPC(new Uint8Array(await res.arrayBuffer()));
      const [value, from, to] = ['value', 'visible_from', 'visible_to'].map((c) => [...t.getChild(c)!].map((v) => (v === null ? null : Number(v))));
      const got = value!.map((v, i) => [v, from![i], to![i]]);
      const expected = referenceVintages(ds, p).map((r) => [r['value'], ms(r['visible_from']), ms(r['visible_to'])]);
      sameRows(path, got, expected);
      nulls += expected.filter((r) => r[2] === null).length;
    }
    expect(nulls).toBeGreaterThan(100);
  });

  it('range and latest pages: 20 of 40 series through the date order, three of different spans swept, latest before a date_to with a forecast after it', async () => {
    const page = async (p: RefParams, limit: number): Promise<number> => {
      const q = Object.entries({ ...p, ...p.filters, filters: undefined }).filter(([, v]) => v !== undefined);
      const path = `/${ds.productId}/${ds.dataset}?${q.map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`).join('&')}`;
      const expected = referenceAnswer(ds, p, h.clock.now()).rows;
      sameRows(`${path} limit ${limit}`, await pageChain(h, path, limit), expected);
      return expected.length;
    };
    const evens = Array.from({ length: SERIES / 2 }, (_, i) => name(2 * i)).join(',');
    const ends = `${name(0)},${name(SERIES - 2)},${name(SERIES - 1)}`;
    const asOf = instant((DAY0 + 9) * DAY_US + 8 * HOUR_US);
    let rows = 0;
    for (const filters of [{ country: half }, { country: evens }, { country: ends }, { country: `${name(5)},${name(SERIES - 1)}` }]) {
      for (const p of [
        { latest: 'false', filters },
        { latest: 'false', date_from: iso(DAY0 + 3), date_to: iso(DAY0 + 14), filters },
        { latest: 'false', date_from: iso(DAY0 + 1), as_of: asOf, filters },
      ] as RefParams[]) {
        const n = await page(p, 10_000);
        await page(p, Math.max(1, Math.ceil(n / 7)));
        rows += n;
      }
    }
    // latest as of day 9's 08:00 up to day 9: a series whose day 9 is not out yet answers day 8,
    // or earlier, even where day 10 is a forecast visible since day 7.
    for (const filters of [undefined, { country: half }, { country: ends }]) {
      for (const p of [
        { latest: 'true', as_of: asOf, date_to: iso(DAY0 + 9) },
        { latest: 'true', as_of: asOf },
        { latest: 'true', date_to: iso(DAY0 + 12) },
      ] as RefParams[]) {
        const q = filters === undefined ? p : { ...p, filters };
        rows += await page(q, 10_000);
        await page(q, 3);
      }
    }
    expect(rows).toBeGreaterThan(1_500);
  });
});
