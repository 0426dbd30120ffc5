/**
 * walk_forward and vintages past every initial scratch size of their resolvers (more than
 * 256 series, pages and sliding windows over 1,024 entries, a key with 70 versions), with a
 * forecast row dated after the decision dates that is already visible before them:
 * walk_forward must equal the single-date queries, vintages the naive interval sweep.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessHarness, type Harness } from './support/harness.js';
import { day, micros, pitSnapshot, rowsOf, type PitRow } from './support/fixtures.js';
import { FLOOR_DATE, type GeneratedSnapshot } from './support/random-snapshot.js';
import { referenceVintages } from './support/reference-vintages.js';

const ZONES = Array.from({ length: 300 }, (_, i) => `z${String(i).padStart(3, '0')}`);
const DATES = ['2026-04-01', '2026-04-02', '2026-04-03', '2026-04-04', '2026-04-05', '2026-04-06', '2026-04-07', '2026-04-08'];

const rows: PitRow[] = [
  ...ZONES.flatMap((z, i) => DATES.map((date) => ({ key: { bidding_zone: z }, date, eff: date, obs: `${date}T06:00:00Z`, tag: `${z}-${date}`, value: i }))),
  // 70 revisions of one key, each observed a minute after the last: every one is an answer for a minute
  ...Array.from({ length: 70 }, (_, i) => ({
    key: { bidding_zone: 'z000' },
    date: '2026-04-03',
    eff: '2026-04-03',
    obs: new Date(Date.parse('2026-04-03T07:00:00Z') + i * 60_000).toISOString().replace('.000Z', 'Z'),
    tag: `rev${i}`,
    value: 1000 + i,
  })),
  // a forecast: dated 04-20, known since 04-02
  { key: { bidding_zone: 'z001' }, date: '2026-04-20', eff: '2026-04-02', obs: '2026-04-02T06:00:00Z', tag: 'forecast', value: -1 },
];

/** The same rows as the reference model reads them (times as µs counts, dates as days). */
const reference = {
  productId: 'pemi',
  seriesKey: ['bidding_zone'],
  columns: [
    { name: 'date', type: 'date32' },
    { name: 'str_effective_at', type: 'timestamp', unit: 'us' },
    { name: 'str_observed_at', type: 'timestamp', unit: 'us' },
    { name: 'str_ingested_at', type: 'timestamp', unit: 'us' },
    { name: 'model_version', type: 'utf8' },
    { name: 'bidding_zone', type: 'utf8' },
    { name: 'value', type: 'float64' },
    { name: 'tag', type: 'utf8' },
  ],
  rows: rows.map((r) => ({
    date: day(r.date),
    str_effective_at: micros(r.eff),
    str_observed_at: micros(r.obs),
    str_ingested_at: micros(r.ing ?? r.obs),
    model_version: '1.0',
    bidding_zone: r.key!.bidding_zone!,
    value: r.value ?? null,
    tag: r.tag,
  })),
} as unknown as GeneratedSnapshot;

describe('walk_forward and vintages at sizes past the resolvers initial scratch', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startInProcessHarness({ datasets: [{ productId: 'pemi', dataset: 'grid_stress', spec: pitSnapshot(['bidding_zone'], rows) }] });
  });
  afterAll(() => h.close());

  async function chain(path: string): Promise<unknown[]> {
    const out: unknown[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 100; page++) {
      const r = await h.get(cursor === null ? path : `${path}&cursor=${cursor}`);
      out.push(...rowsOf(r));
      if (!r.body.has_more) return out;
      cursor = r.body.next_cursor;
    }
    throw new Error('chain did not end');
  }

  it('walk_forward over 300 series equals the single-date queries, in one page and in pages of 1,500', async () => {
    const want: unknown[] = [];
    for (const D of DATES) {
      const from = new Date(Date.parse(D) - 7 * 86_400_000).toISOString().slice(0, 10);
      const single = await chain(`/pemi/grid_stress?date_from=${from}&date_to=${D}&as_of=${D}&limit=10000`);
      // floor_applied ends each row: the decision date is before pemi's vintage floor (contract 16).
      want.push(...single.map((row) => ({ decision_date: D, ...(row as object), floor_applied: D < FLOOR_DATE.pemi! })));
    }
    expect(want.length).toBeGreaterThan(10_000);
    const base = '/pemi/grid_stress/walk_forward?decision_from=2026-04-01&decision_to=2026-04-08&window=7';
    expect(await chain(`${base}&limit=100000`)).toEqual(want);
    expect(await chain(`${base}&limit=1500`)).toEqual(want);
    // the forecast is visible but dated after every decision date: never in the window
    expect(want.some((r) => (r as { tag: string }).tag === 'forecast')).toBe(false);
  });

  it('vintages of the whole dataset equal the naive sweep, in one page and in pages of 1,500', async () => {
    const want = referenceVintages(reference, {});
    expect(want.filter((r) => String(r.tag).startsWith('rev'))).toHaveLength(70);
    expect(await chain('/pemi/grid_stress/vintages?limit=100000')).toEqual(want);
    expect(await chain('/pemi/grid_stress/vintages?limit=1500')).toEqual(want);
    expect(await chain('/pemi/grid_stress/vintages?release=first&bidding_zone=z000&date_from=2026-04-03&date_to=2026-04-03')).toEqual([
      want.find((r) => r.tag === 'z000-2026-04-03'),
    ]);
  });
});
