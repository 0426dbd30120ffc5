// How the explorer turns API answers into chart series and requests (src/explore/page/
// series.js and requests.js, the page's own modules): rows as the data and vintages
// endpoints write them.
import { describe, expect, it } from 'vitest';
import { failureText } from '../src/explore/page/api.js';
import { dataRequest, resolvedDates, seriesChoices, seriesRequest, seriesText, vintagesRequest, withCursor } from '../src/explore/page/requests.js';
import { COLOURS, asOfMillis, cellNumber, chartSeries, chartableColumns, revisionSteps, rowsOfSeries, type CatalogEntry } from '../src/explore/page/series.js';
import { parseState } from '../src/explore/page/state.js';

const day = (d: string): number => Date.parse(`${d}T00:00:00Z`) / 1000;
const row = (date: string, v: unknown): Record<string, unknown> => ({ date, country: 'DE', stress_index: v });

const EU: CatalogEntry = {
  product_id: 'gbsi_eu',
  dataset: 'system_stress',
  floor: '2026-01-13',
  filters: [{ param: 'country', allowed: null }],
  series_key: ['country'],
  columns: [
    { name: 'date', type: 'Date32<DAY>', nullable: false },
    { name: 'str_observed_at', type: 'Timestamp<MILLISECOND, UTC>', nullable: false },
    { name: 'model_version', type: 'Utf8', nullable: false },
    { name: 'country', type: 'Utf8', nullable: false },
    { name: 'stress_index', type: 'Float64', nullable: false },
    { name: 'storage_twh', type: 'Float32', nullable: true },
    { name: 'count', type: 'Int64', nullable: true },
    { name: 'gap', type: 'Interval<DAY_TIME>', nullable: true },
    { name: 'regime', type: 'Dictionary<Int32, Utf8>', nullable: false },
  ],
  date_min: '2021-01-01',
  date_max: '2026-11-19',
};

describe('API answers -> chart series', () => {
  it('one line per as_of over the union of dates, a gap where an as_of has no row', () => {
    const chart = chartSeries(
      [
        { asOf: '2026-02-01', rows: [row('2026-01-30', 56), row('2026-01-31', 55.5)], floorApplied: false },
        { asOf: 'current', rows: [row('2026-01-30', 56.83), row('2026-01-31', 55.5), row('2026-02-01', 54.1)], floorApplied: false },
      ],
      'stress_index',
    );
    expect(chart.x).toEqual([day('2026-01-30'), day('2026-01-31'), day('2026-02-01')]);
    expect(chart.lines.map((l) => [l.asOf, l.values])).toEqual([
      ['current', [56.83, 55.5, 54.1]],
      ['2026-02-01', [56, 55.5, null]],
    ]);
  });

  it('draws the newest first and each older one above it, thinner, each in its own colour', () => {
    const asOfs = ['2026-03-01', 'current', '2026-01-15T12:00:00Z', '2026-01-15', '2026-02-01T00:00:00+01:00'];
    const chart = chartSeries(
      asOfs.map((a) => ({ asOf: a, rows: [row('2026-01-10', 1)], floorApplied: false })),
      'stress_index',
    );
    // 2026-01-15 means the end of that day, after 12:00Z; +01:00 midnight is 2026-01-31T23:00Z.
    expect(chart.lines.map((l) => l.asOf)).toEqual(['current', '2026-03-01', '2026-02-01T00:00:00+01:00', '2026-01-15', '2026-01-15T12:00:00Z']);
    const widths = chart.lines.map((l) => l.width);
    for (let i = 1; i < widths.length; i++) expect(widths[i]).toBeLessThan(widths[i - 1]!);
    expect(widths.at(-1)).toBe(2);
    expect(widths[0]).toBe(8);
    expect(new Set(chart.lines.map((l) => l.colour)).size).toBe(5);
    expect(chart.lines.map((l) => l.colour)).toEqual(COLOURS.slice(0, 5));
  });

  it("dates come sorted whatever the rows' order; a row without a date is left out", () => {
    const chart = chartSeries(
      [
        {
          asOf: 'current',
          rows: [row('2026-01-03', 3), { country: 'DE', stress_index: 9 }, row('2026-01-01', 1), { date: null, stress_index: 8 }],
          floorApplied: false,
        },
      ],
      'stress_index',
    );
    expect(chart.x).toEqual([day('2026-01-01'), day('2026-01-03')]);
    expect(chart.lines[0]!.values).toEqual([1, 3]);
    expect(chart.lines[0]!.width).toBe(2);
  });

  it('the colours are distinct #rrggbb', () => {
    expect(COLOURS).toHaveLength(9);
    for (const c of COLOURS) expect(c).toMatch(/^#[0-9A-F]{6}$/);
    expect(new Set(COLOURS).size).toBe(9);
  });

  it('nine lines (8 as_of and current) get nine colours', () => {
    const asOfs = ['current', ...Array.from({ length: 8 }, (_, i) => `2026-0${i + 1}-01`)];
    const chart = chartSeries(
      asOfs.map((a) => ({ asOf: a, rows: [], floorApplied: false })),
      'stress_index',
    );
    expect(new Set(chart.lines.map((l) => l.colour)).size).toBe(9);
    expect(chart.x).toEqual([]);
  });

  it("legend labels name each as_of, and say when the floor's state is shown", () => {
    const chart = chartSeries(
      [
        { asOf: 'current', rows: [], floorApplied: false },
        { asOf: '2025-12-01', rows: [], floorApplied: true },
      ],
      'stress_index',
    );
    expect(chart.lines.map((l) => l.label)).toEqual(['current (no as_of)', 'as_of 2025-12-01: before the vintage floor, shows the state held at the floor']);
    expect(chart.lines.map((l) => l.floorApplied)).toEqual([false, true]);
  });

  it('cells: numbers, 64-bit integers written as text; null, text and non-finite are gaps', () => {
    expect([12.5, '9007199254740993', null, undefined, 'high', '', Number.NaN, true].map(cellNumber)).toEqual([
      12.5,
      9007199254740992,
      null,
      null,
      null,
      null,
      null,
      null,
    ]);
  });

  it('picks one series out of an answer that holds several', () => {
    const rows = [
      { date: '2026-01-01', region_id: 'TX', region_type: 'state', v: 1 },
      { date: '2026-01-01', region_id: 'TX', region_type: 'county', v: 2 },
      { date: '2026-01-01', region_id: 'CA', region_type: 'state', v: 3 },
    ];
    expect(
      rowsOfSeries(rows, [
        ['region_id', 'TX'],
        ['region_type', 'state'],
      ]),
    ).toEqual([rows[0]]);
    expect(rowsOfSeries(rows, [])).toEqual(rows);
  });

  it('as_of instants: current is the newest; a date is the end of its UTC day', () => {
    expect(asOfMillis('current')).toBe(Number.POSITIVE_INFINITY);
    expect(asOfMillis('2026-02-01')).toBe(Date.UTC(2026, 1, 1, 23, 59, 59, 999));
    expect(asOfMillis('2026-02-01T10:00:00+01:00')).toBe(Date.UTC(2026, 1, 1, 9));
  });

  it('only numeric columns outside the key and date can be drawn', () => {
    expect(chartableColumns(EU)).toEqual(['stress_index', 'storage_twh', 'count']);
    // a dataset not loaded yet: the catalog has no columns for it
    expect(chartableColumns({ ...EU, columns: null, series_key: null })).toEqual([]);
    expect(chartableColumns({ ...EU, series_key: null })).toEqual(['stress_index', 'storage_twh', 'count']);
    const numericKeyAndDate = { ...EU, series_key: ['site'], columns: [...EU.columns!, { name: 'site', type: 'Int32', nullable: false }] };
    expect(
      chartableColumns({ ...numericKeyAndDate, columns: numericKeyAndDate.columns.map((c) => (c.name === 'date' ? { ...c, type: 'Int32' } : c)) }),
    ).toEqual(['stress_index', 'storage_twh', 'count']);
  });
});

describe('vintages answer -> revision steps', () => {
  const NOW = Date.UTC(2026, 10, 20, 12);
  const v = (value: unknown, from: string, to: string | null): Record<string, unknown> => ({
    date: '2026-01-30',
    country: 'DE',
    stress_index: value,
    visible_from: from,
    visible_to: to,
  });

  it('one step per version at its visible_from; the one still the answer runs on as long as the history before it spans', () => {
    const steps = revisionSteps(
      [
        v(56.73, '2026-02-17T09:00:00.000000Z', '2026-03-02T10:00:00.250000Z'),
        v(56, '2026-01-31T08:10:59.136000Z', '2026-02-17T09:00:00.000000Z'),
        v(56.83, '2026-03-02T10:00:00.250000Z', null),
      ],
      'stress_index',
      NOW,
    );
    expect(steps.table).toEqual([
      { value: 56, visibleFrom: '2026-01-31T08:10:59.136000Z', visibleTo: '2026-02-17T09:00:00.000000Z' },
      { value: 56.73, visibleFrom: '2026-02-17T09:00:00.000000Z', visibleTo: '2026-03-02T10:00:00.250000Z' },
      { value: 56.83, visibleFrom: '2026-03-02T10:00:00.250000Z', visibleTo: null },
    ]);
    const from = [Date.UTC(2026, 0, 31, 8, 10, 59, 136), Date.UTC(2026, 1, 17, 9), Date.UTC(2026, 2, 2, 10, 0, 0, 250)];
    expect(steps.x).toEqual([...from, from[2]! + (from[2]! - from[0]!)].map((ms) => ms / 1000));
    expect(steps.y).toEqual([56, 56.73, 56.83, 56.83]);
  });

  it('a single version still the answer: a week of line, never past now', () => {
    const one = [v(56, '2026-01-31T08:00:00Z', null)];
    expect(revisionSteps(one, 'stress_index', NOW).x).toEqual([Date.UTC(2026, 0, 31, 8) / 1000, Date.UTC(2026, 1, 7, 8) / 1000]);
    expect(revisionSteps(one, 'stress_index', Date.UTC(2026, 1, 2)).x).toEqual([Date.UTC(2026, 0, 31, 8) / 1000, Date.UTC(2026, 1, 2) / 1000]);
  });

  it('a last version that stopped being the answer (as_of cut) ends at its visible_to', () => {
    const steps = revisionSteps([v(56, '2026-01-31T08:00:00Z', '2026-02-17T09:00:00Z')], 'stress_index', NOW);
    expect(steps.x).toEqual([Date.UTC(2026, 0, 31, 8) / 1000, Date.UTC(2026, 1, 17, 9) / 1000]);
    expect(steps.y).toEqual([56, 56]);
  });

  it('a row without visible_from is left out; a missing visible_to reads as still the answer', () => {
    const rows = [
      { date: '2026-01-30', stress_index: 1 },
      { date: '2026-01-30', stress_index: 2, visible_from: '2026-02-01T00:00:00Z' },
    ];
    expect(revisionSteps(rows, 'stress_index', NOW).table).toEqual([{ value: 2, visibleFrom: '2026-02-01T00:00:00Z', visibleTo: null }]);
  });

  it('no versions, no steps', () => {
    expect(revisionSteps([], 'stress_index', NOW)).toEqual({ x: [], y: [], table: [] });
  });
});

describe('the requests the page makes', () => {
  const example = parseState(
    'product=gbsi_eu&dataset=system_stress&series=country:DE&column=stress_index&as_of=2026-02-01,2026-03-01&date_from=2025-10-01&date_to=2026-04-30',
  ).state;

  it("the contract's example link: one data request per as_of, current without as_of, filtered by the series", () => {
    expect(dataRequest(EU, example, '2026-02-01')).toBe(
      'gbsi_eu/system_stress?country=DE&date_from=2025-10-01&date_to=2026-04-30&columns=stress_index&limit=10000&as_of=2026-02-01',
    );
    expect(dataRequest(EU, example, 'current', 'csv')).toBe(
      'gbsi_eu/system_stress?country=DE&date_from=2025-10-01&date_to=2026-04-30&columns=stress_index&limit=10000&format=csv',
    );
    expect(dataRequest(EU, example, '2026-02-01T12:00:00+01:00', 'arrow')).toContain('&as_of=2026-02-01T12%3A00%3A00%2B01%3A00&format=arrow');
  });

  it('a series-key column that is no filter parameter is not sent (the page picks its rows)', () => {
    const us: CatalogEntry = { ...EU, product_id: 'gbsi_us', filters: [], series_key: ['region'] };
    expect(dataRequest(us, { ...example, series: [['region', 'lower48']] }, 'current')).toBe(
      'gbsi_us/system_stress?date_from=2025-10-01&date_to=2026-04-30&columns=stress_index&limit=10000',
    );
  });

  it('vintages of one date, the series list, the next page', () => {
    expect(vintagesRequest(EU, example, '2026-01-30')).toBe(
      'gbsi_eu/system_stress/vintages?country=DE&date_from=2026-01-30&date_to=2026-01-30&columns=stress_index&limit=10000',
    );
    expect(vintagesRequest(EU, example, '2026-01-30', 'csv')).toMatch(/&format=csv$/);
    expect(seriesRequest(EU)).toBe('gbsi_eu/system_stress?latest=true&columns=date&limit=10000');
    expect(withCursor('a?b=1', 'x+y/z')).toBe('a?b=1&cursor=x%2By%2Fz');
  });

  it('series choices: distinct, in series-key order, sorted', () => {
    const rows = [
      { date: '2026-11-19', region_type: 'state', region_id: 'TX' },
      { date: '2026-11-19', region_type: 'county', region_id: 'TX' },
      { date: '2026-11-18', region_type: 'state', region_id: 'CA' },
      { date: '2026-11-18', region_type: 'state', region_id: 'TX' },
    ];
    const choices = seriesChoices(rows, ['region_id', 'region_type']);
    expect(choices.map(seriesText)).toEqual(['region_id:CA;region_type:state', 'region_id:TX;region_type:county', 'region_id:TX;region_type:state']);
    const many = ['e', 'c', 'a', 'd', 'b', 'c', 'a'].map((s) => ({ s }));
    expect(seriesChoices(many, ['s']).map(seriesText)).toEqual(['s:a', 's:b', 's:c', 's:d', 's:e']);
    expect(
      seriesChoices(
        [
          { a: 'x', b: 'y;a:z' },
          { a: 'x;b:y', b: 'a:z' },
        ],
        ['a', 'b'],
      ),
    ).toHaveLength(2);
  });

  it('dates left out of the link: the last year the dataset holds, not before its first date', () => {
    const none = parseState('').state;
    expect(resolvedDates(none, EU, 0)).toEqual({ dateFrom: '2025-11-19', dateTo: '2026-11-19' });
    expect(resolvedDates({ ...none, dateTo: '2021-06-30' }, EU, 0)).toEqual({ dateFrom: '2021-01-01', dateTo: '2021-06-30' });
    expect(resolvedDates(example, EU, 0)).toEqual({ dateFrom: '2025-10-01', dateTo: '2026-04-30' });
    expect(resolvedDates(none, { ...EU, date_min: null, date_max: null }, Date.UTC(2026, 5, 15))).toEqual({ dateFrom: '2025-06-15', dateTo: '2026-06-15' });
  });
});

describe('failure messages', () => {
  it('a refused key names the 401; other statuses say what failed', () => {
    expect(failureText(401, 'unauthorized', 'missing or invalid API key', 'the catalog')).toBe(
      '401 Unauthorized: the server refused the API key (missing or invalid API key). Enter a valid key.',
    );
    expect(failureText(404, 'not_found', 'no such product or dataset', 'x/y as_of current')).toBe(
      '404 Not found: x/y as_of current (no such product or dataset).',
    );
    expect(failureText(503, 'dataset_unavailable', 'loading', 'x/y')).toBe('Server error 503 dataset_unavailable for x/y: loading.');
    expect(failureText(0, '', 'Failed to fetch', 'x/y')).toBe('No answer from the server for x/y: Failed to fetch.');
    expect(failureText(400, 'invalid_parameter', 'bad as_of', 'x/y')).toBe('400 invalid_parameter for x/y: bad as_of.');
    expect(failureText(403, 'forbidden', 'not entitled', 'x/y')).toBe('403 Forbidden: this key may not read x/y (not entitled).');
  });
});
