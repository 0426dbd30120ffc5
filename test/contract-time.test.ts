/**
 * Spec 2.3 (PIT-1..5), 4.3 and contract 1: which stored version an `as_of` sees.
 * One dataset, one series per scenario (`case` column), so each test reads its own series.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SnapshotSpec } from '../src/snapshot/arrow-writer.js';
import { startInProcessHarness, type Harness } from './support/harness.js';
import { day, micros, pitSnapshot, rowsOf, tagOfCase, tagsOf, type PitRow } from './support/fixtures.js';

const PATH = '/gbsi_us/system_stress';

// gbsi_us's floor is 2026-03-02: every row here is observed later, so the floor plays no part.
const ROWS: PitRow[] = [
  // PIT-1: business date 04-06, published 3 days later, computed (observed) on 04-07.
  { key: { case: 'pit1' }, date: '2026-04-06', eff: '2026-04-09', obs: '2026-04-07T10:00:00Z', tag: 'pit1' },
  // Catches an effective-only filter: a restatement observed on 04-10 of a row effective 04-06.
  { key: { case: 'obs-axis' }, date: '2026-04-06', eff: '2026-04-06', obs: '2026-04-06T12:00:00Z', tag: 'oa-1' },
  { key: { case: 'obs-axis' }, date: '2026-04-06', eff: '2026-04-06', obs: '2026-04-10T08:00:00Z', tag: 'oa-2' },
  // Catches an observed-only filter: the newer version was computed early but published late.
  { key: { case: 'eff-axis' }, date: '2026-04-06', eff: '2026-04-07', obs: '2026-04-06T20:00:00Z', tag: 'ea-1' },
  { key: { case: 'eff-axis' }, date: '2026-04-06', eff: '2026-04-09', obs: '2026-04-07T10:00:00Z', tag: 'ea-2' },
  // PIT-2/3: the same row before and after a rebuild that rewrote only str_ingested_at.
  { key: { case: 'rb-before' }, date: '2026-04-06', eff: '2026-04-07', obs: '2026-04-07T06:00:00Z', ing: '2026-04-07T07:00:00Z', tag: 'rb-before' },
  { key: { case: 'rb-after' }, date: '2026-04-06', eff: '2026-04-07', obs: '2026-04-07T06:00:00Z', ing: '2026-10-01T00:00:00Z', tag: 'rb-after' },
  // PIT-3: equal observed, the greater ingested wins (it comes first in the snapshot on purpose).
  { key: { case: 'tie-obs' }, date: '2026-04-06', eff: '2026-04-07', obs: '2026-04-07T06:00:00Z', ing: '2026-10-01T00:00:00Z', tag: 'to-late' },
  { key: { case: 'tie-obs' }, date: '2026-04-06', eff: '2026-04-07', obs: '2026-04-07T06:00:00Z', ing: '2026-04-07T07:00:00Z', tag: 'to-early' },
  // PIT-4: observed desc, then ingested desc; the greatest ingested (or-a) has the smallest observed.
  { key: { case: 'order' }, date: '2026-04-06', eff: '2026-04-07', obs: '2026-04-09T00:00:00Z', ing: '2026-04-09T01:00:00Z', tag: 'or-b' },
  { key: { case: 'order' }, date: '2026-04-06', eff: '2026-04-07', obs: '2026-04-08T00:00:00Z', ing: '2026-04-20T00:00:00Z', tag: 'or-a' },
  { key: { case: 'order' }, date: '2026-04-06', eff: '2026-04-07', obs: '2026-04-09T00:00:00Z', ing: '2026-04-09T00:30:00Z', tag: 'or-c' },
  // Full ties (contract 1): the later row in the snapshot wins, whatever its label; batches of
  // 3 rows put each pair's members in different record batches (rows 12/15 and 13/16).
  { key: { case: 'full-tie-1' }, date: '2026-04-06', eff: '2026-04-07', obs: '2026-04-07T06:00:00Z', tag: 'ft-x' },
  { key: { case: 'full-tie-2' }, date: '2026-04-06', eff: '2026-04-07', obs: '2026-04-07T06:00:00Z', tag: 'ft-q' },
  { key: { case: 'filler' }, date: '2026-04-06', eff: '2026-04-07', obs: '2026-04-07T06:00:00Z', tag: 'filler' },
  { key: { case: 'full-tie-1' }, date: '2026-04-06', eff: '2026-04-07', obs: '2026-04-07T06:00:00Z', tag: 'ft-y' },
  { key: { case: 'full-tie-2' }, date: '2026-04-06', eff: '2026-04-07', obs: '2026-04-07T06:00:00Z', tag: 'ft-p' },
  // as_of forms: versions either side of the end of 04-15.
  { key: { case: 'eod' }, date: '2026-04-14', eff: '2026-04-14', obs: '2026-04-14T12:00:00Z', tag: 'eod-1' },
  { key: { case: 'eod' }, date: '2026-04-14', eff: '2026-04-14', obs: '2026-04-15T23:59:59.999999Z', tag: 'eod-2' },
  { key: { case: 'eod' }, date: '2026-04-14', eff: '2026-04-14', obs: '2026-04-16T00:00:00Z', tag: 'eod-3' },
  // Without as_of there is no time filter, not even "now" (the harness clock is 2026-11-20).
  { key: { case: 'future' }, date: '2029-12-31', eff: '2030-01-01', obs: '2030-01-01T06:00:00Z', tag: 'future' },
  // Contract 6: a key may have any number of versions. 40 versions, observed at minute
  // (7k mod 40) after 2026-04-07T00:00Z: minute 39 is k = 17, minute 20 is k = 20.
  ...Array.from({ length: 40 }, (_, k): PitRow => {
    const minute = String((7 * k) % 40).padStart(2, '0');
    return { key: { case: 'many' }, date: '2026-04-06', eff: '2026-04-06', obs: `2026-04-07T00:${minute}:00Z`, tag: `m-${k}` };
  }),
  // 40 versions in a full tie: the last one in the snapshot wins.
  ...Array.from({ length: 40 }, (_, k): PitRow => ({
    key: { case: 'many-tie' },
    date: '2026-04-06',
    eff: '2026-04-06',
    obs: '2026-04-07T00:00:00Z',
    tag: `mt-${k}`,
  })),
];

// A Date32 str_effective_at (its day's 00:00:00Z) and observed / ingested in s and ms units.
const UNITS: SnapshotSpec = {
  seriesKey: [],
  columns: [
    { name: 'date', type: 'date32', values: [day('2026-04-06'), day('2026-04-06'), day('2026-04-06')] },
    { name: 'str_effective_at', type: 'date32', values: [day('2026-04-09'), day('2026-04-09'), day('2026-04-09')] },
    {
      name: 'str_observed_at',
      type: 'timestamp',
      unit: 's',
      values: [micros('2026-04-07T10:00:00Z') / 1e6, micros('2026-04-10T00:00:01Z') / 1e6, micros('2026-04-10T00:00:01Z') / 1e6],
    },
    {
      name: 'str_ingested_at',
      type: 'timestamp',
      unit: 'ms',
      values: [micros('2026-04-07T10:00:00Z') / 1e3, micros('2026-04-10T00:00:01.002Z') / 1e3, micros('2026-04-10T00:00:01.001Z') / 1e3],
    },
    { name: 'model_version', type: 'utf8', values: ['1.0', '1.0', '1.0'] },
    { name: 'tag', type: 'utf8', values: ['u-1', 'u-2', 'u-3'] },
  ],
};

describe('contract 1 / spec 2.3, 4.3: point-in-time resolution', () => {
  let h: Harness;
  const at = (asOf: string | null) => h.get(PATH + (asOf === null ? '' : `?as_of=${encodeURIComponent(asOf)}`));
  const tag = async (asOf: string | null, name: string) => tagOfCase(await at(asOf), name);

  beforeAll(async () => {
    h = await startInProcessHarness({
      datasets: [
        { productId: 'gbsi_us', dataset: 'system_stress', spec: pitSnapshot(['case'], ROWS, { batchRows: 3 }) },
        { productId: 'gbsi_us', dataset: 'balance_momentum', spec: UNITS },
      ],
    });
  });
  afterAll(() => h.close());

  it('PIT-1: a row is invisible to an as_of before its effective time, even when observed earlier', async () => {
    expect(await tag('2026-04-08', 'pit1')).toBeNull();
    expect(await tag('2026-04-08T23:59:59.999999Z', 'pit1')).toBeNull();
    expect(await tag('2026-04-09T00:00:00Z', 'pit1')).toBe('pit1');
    expect(await tag('2026-04-09', 'pit1')).toBe('pit1');
  });

  it('4.3.1: a version observed after as_of is invisible even though it is effective (effective-only filtering would leak)', async () => {
    expect(await tag('2026-04-08', 'obs-axis')).toBe('oa-1');
    expect(await tag('2026-04-10T07:59:59Z', 'obs-axis')).toBe('oa-1');
    expect(await tag('2026-04-10T08:00:00Z', 'obs-axis')).toBe('oa-2');
  });

  it('4.3.1: a version effective after as_of is invisible even though it is observed (observed-only filtering would leak)', async () => {
    expect(await tag('2026-04-06', 'eff-axis')).toBeNull();
    expect(await tag('2026-04-08', 'eff-axis')).toBe('ea-1');
    expect(await tag('2026-04-09', 'eff-axis')).toBe('ea-2');
  });

  it('PIT-2/PIT-3: a rebuild that rewrites str_ingested_at (even to after as_of) does not change what an as_of sees', async () => {
    const cases: Array<[string, boolean]> = [
      ['2026-04-07T05:59:59Z', false],
      ['2026-04-07T06:00:00Z', true],
      ['2026-04-08', true],
    ];
    for (const [asOf, visible] of cases) {
      expect(await tag(asOf, 'rb-before'), asOf).toBe(visible ? 'rb-before' : null);
      expect(await tag(asOf, 'rb-after'), asOf).toBe(visible ? 'rb-after' : null);
    }
  });

  it('PIT-3: among versions with equal str_observed_at, the greater str_ingested_at wins (ingested is no visibility filter)', async () => {
    expect(await tag('2026-04-08', 'tie-obs')).toBe('to-late');
    expect(await tag(null, 'tie-obs')).toBe('to-late');
  });

  it('PIT-4: versions are ordered by str_observed_at desc, then str_ingested_at desc', async () => {
    expect(await tag(null, 'order')).toBe('or-b');
    expect(await tag('2026-04-08', 'order')).toBe('or-a');
    expect(await tag('2026-04-09T00:00:00Z', 'order')).toBe('or-b');
    expect(await tag('2026-04-08T23:59:59Z', 'order')).toBe('or-a');
  });

  it('PIT-4 (contract 1): on a full tie of observed and ingested, the later row in the snapshot wins', async () => {
    expect(await tag(null, 'full-tie-1')).toBe('ft-y');
    expect(await tag(null, 'full-tie-2')).toBe('ft-p');
    expect(await tag('2026-04-08', 'full-tie-1')).toBe('ft-y');
    expect(await tag('2026-04-08', 'full-tie-2')).toBe('ft-p');
  });

  it('PIT-4 with many versions of one key (contract 6: any number of versions)', async () => {
    expect(await tag(null, 'many')).toBe('m-17');
    expect(await tag('2026-04-07T00:20:00Z', 'many')).toBe('m-20');
    expect(await tag('2026-04-07T00:00:00Z', 'many')).toBe('m-0');
    expect(await tag(null, 'many-tie')).toBe('mt-39');
  });

  it('PIT-5: model_version is rendered as the stored string "1.0"', async () => {
    const r = await at(null);
    const rows = rowsOf(r);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row['model_version']).toBe('1.0');
    expect(r.text).toContain('"model_version":"1.0"');
  });

  it('as_of=YYYY-MM-DD is the end of that UTC day: 23:59:59.999999Z is in, 00:00:00Z of the next day is out', async () => {
    expect(await tag('2026-04-14', 'eod')).toBe('eod-1');
    expect(await tag('2026-04-15', 'eod')).toBe('eod-2');
    expect(await tag('2026-04-16', 'eod')).toBe('eod-3');
  });

  it('as_of as RFC 3339 with Z is that exact instant, inclusive, with fractional seconds', async () => {
    expect(await tag('2026-04-15T23:59:59.999999Z', 'eod')).toBe('eod-2');
    expect(await tag('2026-04-15T23:59:59.999998Z', 'eod')).toBe('eod-1');
    expect(await tag('2026-04-15T23:59:59.5Z', 'eod')).toBe('eod-1');
    expect(await tag('2026-04-16T00:00:00Z', 'eod')).toBe('eod-3');
    expect(await tag('2026-04-15T23:59:59Z', 'eod')).toBe('eod-1');
  });

  it('as_of as RFC 3339 with an offset is shifted to UTC', async () => {
    // +02:00: 02:00 local is 00:00Z; 01:59:59 local is 23:59:59Z the day before.
    expect(await tag('2026-04-16T02:00:00+02:00', 'eod')).toBe('eod-3');
    expect(await tag('2026-04-16T01:59:59+02:00', 'eod')).toBe('eod-1');
    expect(await tag('2026-04-16T01:59:59.999999+02:00', 'eod')).toBe('eod-2');
    // -05:00: 19:00 local on 04-15 is 00:00Z on 04-16.
    expect(await tag('2026-04-15T19:00:00-05:00', 'eod')).toBe('eod-3');
    expect(await tag('2026-04-15T18:59:59-05:00', 'eod')).toBe('eod-1');
  });

  it('without as_of every stored version is visible, including ones after the clock', async () => {
    expect(await tag(null, 'eod')).toBe('eod-3');
    expect(await tag(null, 'future')).toBe('future');
    expect(await tag('2026-11-20', 'future')).toBeNull();
  });

  it('contract 1: a Date32 str_effective_at is 00:00:00Z of its date; s and ms timestamps compare at their instant', async () => {
    const units = async (asOf: string) => tagsOf(await h.get(`/gbsi_us/balance_momentum?as_of=${encodeURIComponent(asOf)}`));
    expect(await units('2026-04-08T23:59:59.999999Z')).toEqual([]);
    expect(await units('2026-04-09T00:00:00Z')).toEqual(['u-1']);
    expect(await units('2026-04-10T00:00:00.999999Z')).toEqual(['u-1']);
    // u-2 and u-3 tie on observed (s); u-2 has the greater ingested (ms) though it comes first.
    expect(await units('2026-04-10T00:00:01Z')).toEqual(['u-2']);
    const r = rowsOf(await h.get('/gbsi_us/balance_momentum'));
    expect(r.map((row) => [row['str_effective_at'], row['str_observed_at'], row['str_ingested_at']])).toEqual([
      ['2026-04-09', '2026-04-10T00:00:01Z', '2026-04-10T00:00:01.002Z'],
    ]);
  });
});
