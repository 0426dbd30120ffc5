/**
 * Contract 13: GET /catalog lists, per key, the datasets it may read, with the catalog's
 * word on each (name, description, floor, filters) and what is loaded (columns with their
 * stored Arrow types, series key, generation, rows, series, date range, latest observation).
 */
import { tableFromIPC } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { EU_KEY, startHarness, type Harness } from './support/harness.js';
import { expectError, pitSnapshot, type PitRow } from './support/fixtures.js';

const EU_ROWS: PitRow[] = [
  { key: { country: 'DE' }, date: '2026-01-05', eff: '2026-01-06', obs: '2026-01-06T06:00:00.123Z', tag: 'a' },
  { key: { country: 'DE' }, date: '2026-01-05', eff: '2026-01-06', obs: '2026-01-07T06:00:00Z', tag: 'b' },
  { key: { country: 'FR' }, date: '2026-02-10', eff: '2026-02-10', obs: '2026-02-11T08:30:00.5Z', tag: 'c' },
];
const EU_SPEC = pitSnapshot(['country'], EU_ROWS, { dictionaryKeys: true });
const GLMI_SPEC = pitSnapshot(['basin'], [{ key: { basin: 'atlantic' }, date: '2026-03-01', eff: '2026-03-01', obs: '2026-03-02T00:00:00Z', tag: 'x' }]);

/** What apache-arrow itself says of the published columns: the types GET /catalog must repeat. */
function storedColumns(spec: typeof EU_SPEC): Array<{ name: string; type: string; nullable: boolean }> {
  return tableFromIPC(buildArrowSnapshot(spec, 'file')).schema.fields.map((f) => ({ name: f.name, type: String(f.type), nullable: f.nullable }));
}

describe('contract 13: GET /catalog', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      datasets: [
        { productId: 'gbsi_eu', dataset: 'system_stress', spec: EU_SPEC, generation: 4 },
        { productId: 'glmi', dataset: 'marginality', spec: GLMI_SPEC },
      ],
    });
  });
  afterAll(() => h.close());

  it('lists every dataset of the catalog for a key of every product, loaded or not, in catalog order', async () => {
    const r = await h.get('/catalog');
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.body.datasets.map((d: { product_id: string; dataset: string }) => `${d.product_id}/${d.dataset}`)).toEqual([
      'gbsi_us/system_stress',
      'gbsi_us/balance_momentum',
      'gbsi_us/storage_surprise',
      'gbsi_us/backtest_summary',
      'gbsi_eu/system_stress',
      'pemi/grid_stress',
      'glmi/marginality',
      'wrsi/forecast_stress',
      'wssi_us/demand_shock',
    ]);
  });

  it('says what is loaded: columns with their stored Arrow types, series key, generation, rows, series, dates, latest observation', async () => {
    const r = await h.get('/catalog');
    const eu = r.body.datasets.find((d: { product_id: string }) => d.product_id === 'gbsi_eu');
    expect(eu).toEqual({
      product_id: 'gbsi_eu',
      dataset: 'system_stress',
      product_name: 'Gas Balance Stress Index, EU',
      description: 'European gas system stress signal',
      floor: '2026-01-13',
      filters: [{ param: 'country', allowed: null }],
      series_key: ['country'],
      columns: storedColumns(EU_SPEC),
      state: 'loaded',
      generation: 4,
      rows: 3,
      series: 2,
      date_min: '2026-01-05',
      date_max: '2026-02-10',
      observed_max: '2026-02-11T08:30:00.500Z',
    });
    // The stored types as apache-arrow writes them, not a rendering of pitcache's own.
    expect(eu.columns.map((c: { type: string }) => c.type)).toEqual([
      'Date32<DAY>',
      'Timestamp<MICROSECOND, UTC>',
      'Timestamp<MICROSECOND, UTC>',
      'Timestamp<MICROSECOND, UTC>',
      'Utf8',
      'Dictionary<Int32, Utf8>',
      'Float64',
      'Utf8',
    ]);
    const glmi = r.body.datasets.find((d: { product_id: string }) => d.product_id === 'glmi');
    expect(glmi.filters).toEqual([{ param: 'basin', allowed: ['atlantic', 'pacific', 'middle_east'] }]);
    expect(glmi.observed_max).toBe('2026-03-02T00:00:00.000Z');
  });

  it('a dataset not loaded has null from generation on, and no columns or series key to tell', async () => {
    const r = await h.get('/catalog');
    const pemi = r.body.datasets.find((d: { product_id: string }) => d.product_id === 'pemi');
    expect(pemi).toEqual({
      product_id: 'pemi',
      dataset: 'grid_stress',
      product_name: 'Power Event Market Intelligence',
      description: 'European power grid stress',
      floor: '2026-03-02',
      filters: [{ param: 'bidding_zone', allowed: null }],
      series_key: null,
      columns: null,
      state: 'missing',
      generation: null,
      rows: null,
      series: null,
      date_min: null,
      date_max: null,
      observed_max: null,
    });
  });

  it('lists only the datasets the key may read', async () => {
    const r = await h.get('/catalog', EU_KEY);
    expect(r.status).toBe(200);
    expect(r.body.datasets.map((d: { product_id: string; dataset: string }) => `${d.product_id}/${d.dataset}`)).toEqual([
      'gbsi_eu/system_stress',
      'pemi/grid_stress',
    ]);
  });

  it('401 without a valid key, before anything is listed', async () => {
    expectError(await h.get('/catalog', null), 401, 'unauthorized', undefined);
    expectError(await h.get('/catalog', 'not-a-key'), 401, 'unauthorized', undefined);
  });

  it('json whatever Accept asks; HEAD answers too; other methods 405', async () => {
    const r = await h.get('/catalog', undefined, { headers: { accept: 'text/csv' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await h.get('/catalog', undefined, { method: 'HEAD' })).status).toBe(200);
    const post = await h.get('/catalog', undefined, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });
});
