/**
 * Spec 4.2 and contract 3: product filters (exact, case-sensitive, comma lists, glmi's
 * allowed basins) and unknown parameters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessHarness, type Harness } from './support/harness.js';
import { expectError, pitSnapshot, tagsOf, type PitRow } from './support/fixtures.js';

function row(key: Record<string, string>, date: string, tag: string): PitRow {
  return { key, date, eff: date, obs: `${date}T06:00:00Z`, tag };
}

const EU: PitRow[] = [
  row({ country: 'de' }, '2026-04-01', 'de'),
  row({ country: 'DEU' }, '2026-04-01', 'DEU'),
  row({ country: 'NL' }, '2026-04-02', 'NL'),
  row({ country: 'DE' }, '2026-04-03', 'DE'),
  row({ country: 'D E' }, '2026-04-04', 'D E'),
  row({ country: 'FR' }, '2026-04-05', 'FR'),
];
const GLMI: PitRow[] = [
  row({ basin: 'atlantic' }, '2026-04-01', 'atlantic'),
  row({ basin: 'pacific' }, '2026-04-02', 'pacific'),
  row({ basin: 'middle_east' }, '2026-04-03', 'middle_east'),
];
const WRSI: PitRow[] = [
  row({ geography: 'US', region_type: 'state' }, '2026-04-01', 'US/state'),
  row({ geography: 'US', region_type: 'county' }, '2026-04-01', 'US/county'),
  row({ geography: 'ERCOT', region_type: 'state' }, '2026-04-01', 'ERCOT/state'),
];
// Declared key order differs from the order the filters are listed in (contract 3 only needs membership).
const WSSI: PitRow[] = [
  row({ region_type: 'iso', region_id: 'PJM' }, '2026-04-01', 'iso/PJM'),
  row({ region_type: 'iso', region_id: 'MISO' }, '2026-04-01', 'iso/MISO'),
  row({ region_type: 'state', region_id: 'TX' }, '2026-04-01', 'state/TX'),
];
const PEMI: PitRow[] = [row({ bidding_zone: 'DE-LU' }, '2026-04-01', 'DE-LU'), row({ bidding_zone: 'FR' }, '2026-04-01', 'FR')];
const US: PitRow[] = [row({}, '2026-04-01', 'us')];

describe('contract 3: filters', () => {
  let h: Harness;
  const tags = async (path: string) => tagsOf(await h.get(path));

  beforeAll(async () => {
    h = await startInProcessHarness({
      datasets: [
        { productId: 'gbsi_eu', dataset: 'system_stress', spec: pitSnapshot(['country'], EU, { dictionaryKeys: true }) },
        { productId: 'glmi', dataset: 'marginality', spec: pitSnapshot(['basin'], GLMI) },
        { productId: 'wrsi', dataset: 'forecast_stress', spec: pitSnapshot(['geography', 'region_type'], WRSI) },
        { productId: 'wssi_us', dataset: 'demand_shock', spec: pitSnapshot(['region_type', 'region_id'], WSSI) },
        { productId: 'pemi', dataset: 'grid_stress', spec: pitSnapshot(['bidding_zone'], PEMI) },
        { productId: 'gbsi_us', dataset: 'system_stress', spec: pitSnapshot([], US) },
      ],
    });
  });
  afterAll(() => h.close());

  it('a filter is an exact, case-sensitive match', async () => {
    expect(await tags('/gbsi_eu/system_stress?country=DE')).toEqual(['DE']);
    expect(await tags('/gbsi_eu/system_stress?country=de')).toEqual(['de']);
    expect(await tags('/gbsi_eu/system_stress?country=DEU')).toEqual(['DEU']);
    expect(await tags('/gbsi_eu/system_stress?country=De')).toEqual([]);
    expect(await tags('/gbsi_eu/system_stress?country=D')).toEqual([]);
    expect(await tags('/gbsi_eu/system_stress?country=D%20E')).toEqual(['D E']);
  });

  it('a value no row has matches nothing: 200 with no rows', async () => {
    const r = await h.get('/gbsi_eu/system_stress?country=XX');
    expect(tagsOf(r)).toEqual([]);
    expect(r.body.count).toBe(0);
    expect(r.body.metadata.total_count).toBe(0);
  });

  it('a comma-separated list means any of these values', async () => {
    expect(await tags('/gbsi_eu/system_stress?country=DE,FR')).toEqual(['DE', 'FR']);
    expect(await tags('/gbsi_eu/system_stress?country=FR,DE')).toEqual(['DE', 'FR']);
    expect(await tags('/gbsi_eu/system_stress?country=DE,XX')).toEqual(['DE']);
    expect(await tags('/gbsi_eu/system_stress?country=de,NL,DEU')).toEqual(['DEU', 'de', 'NL']);
  });

  it('glmi basin accepts atlantic, pacific and middle_east', async () => {
    expect(await tags('/glmi/marginality?basin=atlantic')).toEqual(['atlantic']);
    expect(await tags('/glmi/marginality?basin=middle_east')).toEqual(['middle_east']);
    expect(await tags('/glmi/marginality?basin=pacific,atlantic')).toEqual(['atlantic', 'pacific']);
  });

  it('glmi basin outside its allowed values is a 400 listing them', async () => {
    for (const v of ['middle_eastern', 'Atlantic', 'atlantic,middle_eastern', 'indian']) {
      const r = await h.get(`/glmi/marginality?basin=${v}`);
      expectError(r, 400, 'invalid_parameter', 'basin');
      for (const allowed of ['atlantic', 'pacific', 'middle_east']) expect(r.body.error.message).toContain(allowed);
    }
  });

  it('wrsi geography and region_type combine (both must match)', async () => {
    expect(await tags('/wrsi/forecast_stress?geography=US')).toEqual(['US/county', 'US/state']);
    expect(await tags('/wrsi/forecast_stress?region_type=state')).toEqual(['ERCOT/state', 'US/state']);
    expect(await tags('/wrsi/forecast_stress?geography=US&region_type=state')).toEqual(['US/state']);
    expect(await tags('/wrsi/forecast_stress?geography=us')).toEqual([]);
  });

  it('a second filter with a list: any of its values, long lists too (over 8 values: checked through a set of codes), values no row has ignored', async () => {
    const many = (...real: string[]): string => [...real, ...Array.from({ length: 9 }, (_, i) => `none${i}`)].join(',');
    expect(await tags('/wrsi/forecast_stress?geography=US&region_type=state,county')).toEqual(['US/county', 'US/state']);
    expect(await tags('/wrsi/forecast_stress?geography=US,ERCOT&region_type=county,nowhere')).toEqual(['US/county']);
    expect(await tags(`/wrsi/forecast_stress?geography=US,ERCOT&region_type=${many('state')}`)).toEqual(['ERCOT/state', 'US/state']);
    expect(await tags(`/wrsi/forecast_stress?geography=US&region_type=${many('county')}`)).toEqual(['US/county']);
    expect(await tags(`/wrsi/forecast_stress?geography=ERCOT&region_type=${many()}`)).toEqual([]);
  });

  it('wssi_us region_id and region_type filter their columns', async () => {
    expect(await tags('/wssi_us/demand_shock?region_type=iso')).toEqual(['iso/MISO', 'iso/PJM']);
    expect(await tags('/wssi_us/demand_shock?region_id=TX,PJM')).toEqual(['iso/PJM', 'state/TX']);
    expect(await tags('/wssi_us/demand_shock?region_id=TX&region_type=iso')).toEqual([]);
  });

  it('pemi bidding_zone filters its column', async () => {
    expect(await tags('/pemi/grid_stress?bidding_zone=DE-LU')).toEqual(['DE-LU']);
  });

  it('an unknown parameter is a 400 naming it', async () => {
    for (const [path, param] of [
      ['/gbsi_eu/system_stress?foo=1', 'foo'],
      ['/gbsi_eu/system_stress?Country=DE', 'Country'],
      ['/glmi/marginality?basin=atlantic&asof=2026-04-01', 'asof'],
      ['/gbsi_us/system_stress?x', 'x'],
    ] as const) {
      const r = await h.get(path);
      expectError(r, 400, 'unknown_parameter', param);
      expect(r.body.error.message).toContain(param);
    }
  });

  it('a filter of another product is an unknown parameter (400 naming it)', async () => {
    for (const [path, param] of [
      ['/glmi/marginality?country=DE', 'country'],
      ['/gbsi_eu/system_stress?basin=atlantic', 'basin'],
      ['/gbsi_eu/system_stress?bidding_zone=FR', 'bidding_zone'],
      ['/wrsi/forecast_stress?region_id=TX', 'region_id'],
      ['/wssi_us/demand_shock?geography=US', 'geography'],
      ['/gbsi_us/system_stress?country=DE', 'country'],
    ] as const) {
      const r = await h.get(path);
      expectError(r, 400, 'unknown_parameter', param);
      expect(r.body.error.message).toContain(param);
    }
  });

  it('an empty filter value is a 400 naming the filter', async () => {
    expectError(await h.get('/gbsi_eu/system_stress?country='), 400, 'invalid_parameter', 'country');
    expectError(await h.get('/gbsi_eu/system_stress?country'), 400, 'invalid_parameter', 'country');
    expectError(await h.get('/glmi/marginality?basin='), 400, 'invalid_parameter', 'basin');
  });
});
