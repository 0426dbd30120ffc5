/**
 * Contract 2: `latest`, `date_from` / `date_to`, and the order of rows (date ascending, then
 * the series-key columns in declared order, each by UTF-8 byte order).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessHarness, type Harness } from './support/harness.js';
import { expectError, pitSnapshot, rowsOf, tagsOf, type PitRow } from './support/fixtures.js';

/** wrsi, key (geography, region_type): each row is effective the day after its date, observed at 06:00 that day. */
function wrsiRow(geography: string, regionType: string, date: string, tag: string): PitRow {
  const next = new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
  return { key: { geography, region_type: regionType }, date, eff: next, obs: `${next}T06:00:00Z`, tag };
}

// Declared in an order that is none of the output orders.
const WRSI: PitRow[] = [
  wrsiRow('US', 'state', '2026-04-03', 's3'),
  wrsiRow('US', 'county', '2026-04-01', 'c1'),
  wrsiRow('ERCOT', 'zone', '2026-04-02', 'z2'),
  wrsiRow('US', 'state', '2026-04-01', 's1'),
  wrsiRow('ERCOT', 'zone', '2026-04-01', 'z1'),
  wrsiRow('US', 'state', '2026-04-02', 's2'),
];

// Strings whose UTF-16 order (JS `<`) and UTF-8 byte order disagree: U+FF5A is one UTF-16
// unit above the surrogates of U+1F600, but its UTF-8 bytes (EF ..) sort before F0 ...
const FULLWIDTH_Z = '\uFF5A';
const GRINNING = '\u{1F600}';
const REGION_IDS = [GRINNING, 'a', FULLWIDTH_Z, 'Z', '\u00E9', 'ab'];

const WSSI: PitRow[] = [
  ...REGION_IDS.map((id): PitRow => ({
    key: { region_id: id, region_type: 't' },
    date: '2026-05-01',
    eff: '2026-05-01',
    obs: '2026-05-01T06:00:00Z',
    tag: id,
  })),
  // Second key column breaks ties of the first; declared before its sibling on purpose.
  { key: { region_id: 'a', region_type: 's' }, date: '2026-05-01', eff: '2026-05-01', obs: '2026-05-01T06:00:00Z', tag: 'a/s' },
  // A later date sorts after every row of an earlier date, whatever its key.
  { key: { region_id: ' ', region_type: 't' }, date: '2026-05-02', eff: '2026-05-02', obs: '2026-05-02T06:00:00Z', tag: 'space' },
];

describe('contract 2: latest, date bounds and row order', () => {
  let h: Harness;
  const wrsi = async (q: string) => tagsOf(await h.get(`/wrsi/forecast_stress${q}`));

  beforeAll(async () => {
    h = await startInProcessHarness({
      datasets: [
        { productId: 'wrsi', dataset: 'forecast_stress', spec: pitSnapshot(['geography', 'region_type'], WRSI) },
        { productId: 'wssi_us', dataset: 'demand_shock', spec: pitSnapshot(['region_id', 'region_type'], WSSI, { dictionaryKeys: true, batchRows: 3 }) },
        {
          productId: 'gbsi_us',
          dataset: 'system_stress',
          spec: pitSnapshot(
            [],
            [wrsiRow('-', '-', '2026-04-02', 'one-2'), wrsiRow('-', '-', '2026-04-01', 'one-1')].map((r) => ({ ...r, key: {} })),
          ),
        },
      ],
    });
  });
  afterAll(() => h.close());

  it('latest=true is the default: per series, the row with the greatest date', async () => {
    // (US,county) 04-01, (ERCOT,zone) 04-02, (US,state) 04-03, ordered by date.
    expect(await wrsi('')).toEqual(['c1', 'z2', 's3']);
    expect(await wrsi('?latest=true')).toEqual(['c1', 'z2', 's3']);
  });

  it('latest with date_to: per series, the greatest date <= date_to', async () => {
    expect(await wrsi('?date_to=2026-04-02')).toEqual(['c1', 'z2', 's2']);
    expect(await wrsi('?date_to=2026-04-01')).toEqual(['z1', 'c1', 's1']);
    expect(await wrsi('?date_to=2026-03-31')).toEqual([]);
  });

  it('latest with as_of: per series, the greatest date that has a visible version', async () => {
    // as_of 04-02: rows dated 04-02 are effective 04-03, so each series falls back to 04-01.
    expect(await wrsi('?as_of=2026-04-02')).toEqual(['z1', 'c1', 's1']);
    expect(await wrsi('?as_of=2026-04-03')).toEqual(['c1', 'z2', 's2']);
  });

  it('latest=false: every resolved row (with date <= date_to when given)', async () => {
    expect(await wrsi('?latest=false')).toEqual(['z1', 'c1', 's1', 'z2', 's2', 's3']);
    expect(await wrsi('?latest=false&date_to=2026-04-01')).toEqual(['z1', 'c1', 's1']);
    expect(await wrsi('?latest=false&as_of=2026-04-03')).toEqual(['z1', 'c1', 's1', 'z2', 's2']);
  });

  it('date_from given: latest is ignored, every resolved row in [date_from, date_to], both ends inclusive', async () => {
    expect(await wrsi('?date_from=2026-04-02')).toEqual(['z2', 's2', 's3']);
    expect(await wrsi('?date_from=2026-04-02&latest=true')).toEqual(['z2', 's2', 's3']);
    expect(await wrsi('?date_from=2026-04-02&latest=false')).toEqual(['z2', 's2', 's3']);
    expect(await wrsi('?date_from=2026-04-02&date_to=2026-04-02')).toEqual(['z2', 's2']);
    expect(await wrsi('?date_from=2026-04-01&date_to=2026-04-02&as_of=2026-04-02')).toEqual(['z1', 'c1', 's1']);
    expect(await wrsi('?date_from=2026-04-04')).toEqual([]);
  });

  it('date_from > date_to is a 400', async () => {
    expectError(await h.get('/wrsi/forecast_stress?date_from=2026-04-03&date_to=2026-04-02'), 400, 'invalid_parameter', 'any');
  });

  it('latest takes true or false only', async () => {
    for (const v of ['yes', 'TRUE', '1', '']) {
      expectError(await h.get(`/wrsi/forecast_stress?latest=${v}`), 400, 'invalid_parameter', 'latest');
    }
  });

  it('order: date ascending, then series-key columns in declared order (multi-column key)', async () => {
    const rows = rowsOf(await h.get('/wrsi/forecast_stress?latest=false'));
    expect(rows.map((r) => [r['date'], r['geography'], r['region_type']])).toEqual([
      ['2026-04-01', 'ERCOT', 'zone'],
      ['2026-04-01', 'US', 'county'],
      ['2026-04-01', 'US', 'state'],
      ['2026-04-02', 'ERCOT', 'zone'],
      ['2026-04-02', 'US', 'state'],
      ['2026-04-03', 'US', 'state'],
    ]);
  });

  it('order: series-key values compare by UTF-8 bytes, not by JS (UTF-16) string order', async () => {
    const byUtf8 = [...REGION_IDS].sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
    // The case is only worth having if the two orders disagree.
    expect([...REGION_IDS].sort()).not.toEqual(byUtf8);
    expect(Buffer.compare(Buffer.from(FULLWIDTH_Z), Buffer.from(GRINNING))).toBeLessThan(0);
    expect(byUtf8).toEqual(['Z', 'a', 'ab', '\u00E9', FULLWIDTH_Z, GRINNING]);

    const rows = rowsOf(await h.get('/wssi_us/demand_shock?latest=false'));
    expect(rows.map((r) => [r['date'], r['region_id'], r['region_type']])).toEqual([
      ['2026-05-01', 'Z', 't'],
      ['2026-05-01', 'a', 's'],
      ['2026-05-01', 'a', 't'],
      ['2026-05-01', 'ab', 't'],
      ['2026-05-01', '\u00E9', 't'],
      ['2026-05-01', FULLWIDTH_Z, 't'],
      ['2026-05-01', GRINNING, 't'],
      ['2026-05-02', ' ', 't'],
    ]);
  });

  it('order: latest=true answers follow the same order', async () => {
    expect(tagsOf(await h.get('/wssi_us/demand_shock'))).toEqual(['Z', 'a/s', 'a', 'ab', '\u00E9', FULLWIDTH_Z, GRINNING, 'space']);
  });

  it('an empty series key (contract 2) makes the dataset one series: a key is the date alone', async () => {
    expect(tagsOf(await h.get('/gbsi_us/system_stress'))).toEqual(['one-2']);
    expect(tagsOf(await h.get('/gbsi_us/system_stress?latest=false'))).toEqual(['one-1', 'one-2']);
  });
});
