/**
 * Contract 13 end to end with invented products: a catalog.json set with `pitcache catalog
 * --set`, data published with `pitcache publish` (an Arrow file, then a CSV revision),
 * served by a real server. A product whose series key has no column (one series, no
 * filter, no floor) and one whose key has two columns, both filters (one of them closed),
 * under a floor: as_of, latest, walk_forward, vintages, asof_join, cursors, filters,
 * /catalog, /openapi.json and the typed client all behave per contract. Every expected
 * value is read off the rows below.
 */
import { tableFromIPC } from 'apache-arrow';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogCommand } from '../src/cli/catalog-command.js';
import { publishCommand } from '../src/cli/publish-command.js';
import { PitcacheClient, PitcacheError } from '../src/client/index.js';
import { MemoryOutput } from '../src/publish/output.js';
import { buildArrowSnapshot, type ColumnSpec } from '../src/snapshot/arrow-writer.js';
import { ManualClock } from '../src/time/clock.js';
import { day, expectError, micros, rowsOf } from './support/fixtures.js';
import { TEST_KEY, startHarness, type Harness, type Reply } from './support/harness.js';

const CATALOG = {
  format: 'pitcache-catalog/1',
  products: [
    { id: 'tide', name: 'Tide Gauge', floor: null, filters: [], datasets: [{ name: 'level', description: 'one gauge, no key' }] },
    {
      id: 'acme',
      name: 'Acme Grid',
      floor: '2026-03-03',
      filters: [
        { param: 'site', allowed: null },
        { param: 'band', allowed: ['low', 'high'] },
      ],
      datasets: [{ name: 'load', description: 'load by site and band' }],
    },
  ],
};

const T = (iso: string): number => micros(iso);

/** tide/level, generation 1 (Arrow): one series, one version a day. */
const TIDE = [
  { date: '2026-03-01', obs: '2026-03-01T06:00:00Z', value: 1, count: 10, flag: true },
  { date: '2026-03-02', obs: '2026-03-02T06:00:00Z', value: 2, count: 20, flag: false },
  { date: '2026-03-03', obs: '2026-03-03T06:00:00Z', value: 3, count: 30, flag: null },
];
/** tide/level, generation 2 (CSV): 2026-03-01 restated on 2026-03-04, 2026-03-04 new, the others unchanged (not appended). */
const TIDE_CSV = [
  'date,str_effective_at,str_observed_at,str_ingested_at,model_version,value,count,flag',
  '2026-03-01,2026-03-01,2026-03-04T06:00:00Z,2026-03-04T06:00:00Z,1.0,1.5,11,true',
  '2026-03-02,2026-03-02,2026-03-02T06:00:00Z,2026-03-02T06:00:00Z,1.0,2,20,false',
  '2026-03-03,2026-03-03,2026-03-03T06:00:00Z,2026-03-03T06:00:00Z,1.0,3,30,',
  '2026-03-04,2026-03-04,2026-03-04T07:00:00Z,2026-03-04T07:00:00Z,1.0,4,40,true',
].join('\n');

/** acme/load: series (site, band); (north, low) of 2026-03-02 restated after the floor (2026-03-03). */
const ACME = [
  { date: '2026-03-02', site: 'north', band: 'low', obs: '2026-03-02T06:00:00Z', mw: 100, tag: 'nl2a' },
  { date: '2026-03-02', site: 'north', band: 'low', obs: '2026-03-05T06:00:00Z', mw: 110, tag: 'nl2b' },
  { date: '2026-03-02', site: 'north', band: 'high', obs: '2026-03-02T06:00:00Z', mw: 200, tag: 'nh2' },
  { date: '2026-03-03', site: 'south', band: 'low', obs: '2026-03-03T06:00:00Z', mw: 300, tag: 'sl3' },
  { date: '2026-03-04', site: 'north', band: 'low', obs: '2026-03-04T06:00:00Z', mw: 120, tag: 'nl4' },
];

function tideColumns(): ColumnSpec[] {
  return [
    { name: 'date', type: 'date32', values: TIDE.map((r) => day(r.date)) },
    { name: 'str_effective_at', type: 'date32', values: TIDE.map((r) => day(r.date)) },
    { name: 'str_observed_at', type: 'timestamp', unit: 'us', values: TIDE.map((r) => T(r.obs)) },
    { name: 'str_ingested_at', type: 'timestamp', unit: 'us', values: TIDE.map((r) => T(r.obs)) },
    { name: 'model_version', type: 'utf8', values: TIDE.map(() => '1.0') },
    { name: 'value', type: 'float64', values: TIDE.map((r) => r.value) },
    { name: 'count', type: 'int32', values: TIDE.map((r) => r.count) },
    { name: 'flag', type: 'bool', values: TIDE.map((r) => r.flag) },
  ];
}

function acmeColumns(): ColumnSpec[] {
  return [
    { name: 'date', type: 'date32', values: ACME.map((r) => day(r.date)) },
    { name: 'str_effective_at', type: 'timestamp', unit: 'us', values: ACME.map((r) => T(`${r.date}T00:00:00Z`)) },
    { name: 'str_observed_at', type: 'timestamp', unit: 'us', values: ACME.map((r) => T(r.obs)) },
    { name: 'str_ingested_at', type: 'timestamp', unit: 'us', values: ACME.map((r) => T(r.obs)) },
    { name: 'model_version', type: 'utf8', values: ACME.map(() => '1.0') },
    { name: 'site', type: 'utf8', values: ACME.map((r) => r.site) },
    { name: 'band', type: 'dict-utf8', values: ACME.map((r) => r.band) },
    { name: 'mw', type: 'int64', values: ACME.map((r) => BigInt(r.mw)) },
    { name: 'tag', type: 'utf8', values: ACME.map((r) => r.tag) },
  ];
}

let work: string;
let h: Harness;
let client: PitcacheClient;

async function cli(command: typeof publishCommand, argv: string[]): Promise<void> {
  const io = { stdout: new MemoryOutput(), stderr: new MemoryOutput() };
  const code = await command(argv, {}, io, new ManualClock(Date.UTC(2026, 2, 10)));
  if (code !== 0) throw new Error(`${argv.join(' ')}: exit ${code}: ${io.stderr.text()}`);
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'pitcache-invented-'));
  h = await startHarness({
    datasets: [],
    prepare: async (dir) => {
      await writeFile(join(work, 'catalog.json'), JSON.stringify(CATALOG));
      await cli((argv, env, io) => catalogCommand(argv, env, io), ['--source', dir, '--set', join(work, 'catalog.json')]);
      await writeFile(join(work, 'tide.arrow'), buildArrowSnapshot({ columns: tideColumns(), seriesKey: [] }));
      await cli(publishCommand, ['--source', dir, '--product', 'tide', '--dataset', 'level', '--input', join(work, 'tide.arrow')]);
      await writeFile(join(work, 'tide.csv'), TIDE_CSV + '\n');
      await cli(publishCommand, ['--source', dir, '--product', 'tide', '--dataset', 'level', '--input', join(work, 'tide.csv')]);
      await writeFile(join(work, 'acme.arrow'), buildArrowSnapshot({ columns: acmeColumns(), seriesKey: ['site', 'band'] }));
      await cli(publishCommand, ['--source', dir, '--product', 'acme', '--dataset', 'load', '--input', join(work, 'acme.arrow'), '--replace']);
    },
  });
  client = new PitcacheClient({ baseUrl: h.url, apiKey: TEST_KEY, maxRetries: 0 });
});
afterAll(async () => {
  await h?.close();
  await rm(work, { recursive: true, force: true });
});

const ok = (r: Reply): Reply => {
  expect(r.status, r.text).toBe(200);
  return r;
};
const values = (r: Reply): unknown[] => rowsOf(ok(r)).map((row) => [row.date, row.value]);
const tags = (r: Reply): unknown[] => rowsOf(ok(r)).map((row) => row.tag);

describe('a product whose series key has no column (no filter, no floor)', () => {
  it("latest is the one series' greatest date; as_of rebuilds what was known then", async () => {
    expect(values(await h.get('/tide/level'))).toEqual([['2026-03-04', 4]]);
    expect(values(await h.get('/tide/level?as_of=2026-03-02'))).toEqual([['2026-03-02', 2]]);
    expect(values(await h.get('/tide/level?latest=false&as_of=2026-03-02'))).toEqual([
      ['2026-03-01', 1],
      ['2026-03-02', 2],
    ]);
    const all = ok(await h.get('/tide/level?latest=false'));
    expect(values(all)).toEqual([
      ['2026-03-01', 1.5],
      ['2026-03-02', 2],
      ['2026-03-03', 3],
      ['2026-03-04', 4],
    ]);
    // the stored types render as the contract says: Int32 as a number, Bool as true/false/null
    expect(rowsOf(all).map((r) => [r.count, r.flag])).toEqual([
      [11, true],
      [20, false],
      [30, null],
      [40, true],
    ]);
    // no floor: never floor-applied, even for an as_of long before the data
    const early = ok(await h.get('/tide/level?as_of=2020-01-01'));
    expect(early.headers.get('x-floor-applied')).toBe('false');
    expect(early.body.data).toEqual([]);
  });

  it('pages through a cursor chain to the same rows; a filter is an unknown parameter', async () => {
    const pages: unknown[] = [];
    let cursor: string | undefined;
    do {
      const r = ok(await h.get(`/tide/level?latest=false&limit=1${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`));
      pages.push(...values(r));
      cursor = r.body.has_more ? r.body.next_cursor : undefined;
    } while (cursor !== undefined);
    expect(pages).toEqual(values(await h.get('/tide/level?latest=false')));
    expectError(await h.get('/tide/level?site=north'), 400, 'unknown_parameter', 'site');
  });

  it('vintages: the restated day has two versions, the first visible until the restatement', async () => {
    const r = ok(await h.get('/tide/level/vintages?date_from=2026-03-01&date_to=2026-03-01'));
    expect(rowsOf(r).map((v) => [v.value, v.visible_from, v.visible_to])).toEqual([
      [1, '2026-03-01T06:00:00.000000Z', '2026-03-04T06:00:00.000000Z'],
      [1.5, '2026-03-04T06:00:00.000000Z', null],
    ]);
  });

  it('walk_forward: each decision date sees its window as known then; floor_applied is false throughout', async () => {
    const r = ok(await h.get('/tide/level/walk_forward?decision_from=2026-03-03&decision_to=2026-03-04&window=2'));
    expect(r.headers.get('x-floor-applied')).toBe('false');
    expect(rowsOf(r).map((w) => [w.decision_date, w.date, w.value, w.floor_applied])).toEqual([
      ['2026-03-03', '2026-03-01', 1, false],
      ['2026-03-03', '2026-03-02', 2, false],
      ['2026-03-03', '2026-03-03', 3, false],
      ['2026-03-04', '2026-03-02', 2, false],
      ['2026-03-04', '2026-03-03', 3, false],
      ['2026-03-04', '2026-03-04', 4, false],
    ]);
  });

  it('asof_join: events carry only `at` (the key has no column); each gets the row knowable then', async () => {
    const r = await h.get('/tide/level/asof_join?columns=value', TEST_KEY, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([
        { at: '2026-03-02T12:00:00Z', id: 'e1' },
        { at: '2026-03-04T06:30:00Z', id: 'e2' },
        { at: '2026-02-01', id: 'e3' },
      ]),
    });
    expect(rowsOf(ok(r)).map((j) => [j.id, j.date, j.value, j.floor_applied])).toEqual([
      ['e1', '2026-03-02', 2, false],
      ['e2', '2026-03-03', 3, false],
      ['e3', null, null, false],
    ]);
  });
});

describe('a product whose series key has two columns, both filters, under a floor', () => {
  it('latest: one row per series; filters select by either column, lists meaning any', async () => {
    expect(tags(await h.get('/acme/load'))).toEqual(['nh2', 'sl3', 'nl4']);
    expect(tags(await h.get('/acme/load?band=low'))).toEqual(['sl3', 'nl4']);
    expect(tags(await h.get('/acme/load?site=north&band=low,high'))).toEqual(['nh2', 'nl4']);
    expect(tags(await h.get('/acme/load?latest=false&site=north&band=low'))).toEqual(['nl2b', 'nl4']);
    expect(tags(await h.get('/acme/load?site=west'))).toEqual([]);
  });

  it("a value outside a closed filter is 400 invalid_parameter; another product's filter 400 unknown_parameter", async () => {
    expectError(await h.get('/acme/load?band=mid'), 400, 'invalid_parameter', 'band');
    expectError(await h.get('/acme/load?country=DE'), 400, 'unknown_parameter', 'country');
  });

  it('as_of before the floor sees the state held at the floor, and says so', async () => {
    const before = ok(await h.get('/acme/load?latest=false&as_of=2026-03-02T03:00:00Z'));
    expect(before.headers.get('x-floor-applied')).toBe('true');
    // in effect by then and observed by the floor day's end (2026-03-03), though after as_of: nh2 and nl2a;
    // not sl3 (in effect on 03-03), nor nl2b (observed 03-05)
    expect(tags(before)).toEqual(['nh2', 'nl2a']);
    const after = ok(await h.get('/acme/load?latest=false&as_of=2026-03-04'));
    expect(after.headers.get('x-floor-applied')).toBe('false');
    expect(tags(after)).toEqual(['nh2', 'nl2a', 'sl3', 'nl4']);
  });

  it('walk_forward: floor_applied before the floor; before_floor=error names the floor', async () => {
    const r = ok(await h.get('/acme/load/walk_forward?decision_from=2026-03-02&decision_to=2026-03-05&window=3&site=north&band=low'));
    expect(rowsOf(r).map((w) => [w.decision_date, w.tag, w.floor_applied])).toEqual([
      ['2026-03-02', 'nl2a', true],
      ['2026-03-03', 'nl2a', false],
      ['2026-03-04', 'nl2a', false],
      ['2026-03-04', 'nl4', false],
      ['2026-03-05', 'nl2b', false],
      ['2026-03-05', 'nl4', false],
    ]);
    const refused = await h.get('/acme/load/walk_forward?decision_from=2026-03-02&decision_to=2026-03-05&before_floor=error');
    expectError(refused, 400, 'before_floor', 'any');
    expect(refused.body.error.message).toContain('2026-03-03');
  });

  it('vintages of one series, and cursors over the whole history', async () => {
    const r = ok(await h.get('/acme/load/vintages?site=north&band=low&date_to=2026-03-02'));
    expect(rowsOf(r).map((v) => [v.tag, v.visible_to])).toEqual([
      ['nl2a', '2026-03-05T06:00:00.000000Z'],
      ['nl2b', null],
    ]);
    const chain: unknown[] = [];
    let cursor: string | undefined;
    do {
      const page = ok(await h.get(`/acme/load/vintages?limit=2${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`));
      chain.push(...tags(page));
      cursor = page.body.has_more ? page.body.next_cursor : undefined;
    } while (cursor !== undefined);
    expect(chain).toEqual(tags(await h.get('/acme/load/vintages')));
    expect(chain).toHaveLength(ACME.length);
  });

  it('asof_join: events carry both key columns', async () => {
    const r = await h.get('/acme/load/asof_join?columns=tag', TEST_KEY, {
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: 'at,site,band\n2026-03-04T12:00:00Z,north,low\n2026-03-06,north,low\n2026-03-04,south,high\n2026-03-02T03:00:00Z,north,high\n',
    });
    expect(rowsOf(ok(r)).map((j) => [j.site, j.band, j.tag, j.floor_applied])).toEqual([
      ['north', 'low', 'nl4', false],
      ['north', 'low', 'nl4', false],
      ['south', 'high', null, false],
      ['north', 'high', 'nh2', true],
    ]);
  });
});

describe('what the server says of the invented catalog', () => {
  it('GET /catalog: each dataset with its series key, columns and Arrow types, filters, floor and what is loaded', async () => {
    const r = ok(await h.get('/catalog'));
    const [tide, acme] = r.body.datasets;
    expect(tide).toMatchObject({
      product_id: 'tide',
      dataset: 'level',
      product_name: 'Tide Gauge',
      description: 'one gauge, no key',
      floor: null,
      filters: [],
      series_key: [],
      state: 'loaded',
      generation: 2,
      rows: 5,
      series: 1,
      date_min: '2026-03-01',
      date_max: '2026-03-04',
      observed_max: '2026-03-04T07:00:00.000Z',
    });
    expect(tide.columns.map((c: { name: string; type: string }) => `${c.name}:${c.type}`)).toEqual([
      'date:Date32<DAY>',
      'str_effective_at:Date32<DAY>',
      'str_observed_at:Timestamp<MICROSECOND, UTC>',
      'str_ingested_at:Timestamp<MICROSECOND, UTC>',
      'model_version:Utf8',
      'value:Float64',
      'count:Int32',
      'flag:Bool',
    ]);
    expect(acme).toMatchObject({
      product_id: 'acme',
      floor: '2026-03-03',
      filters: CATALOG.products[1]!.filters,
      series_key: ['site', 'band'],
      series: 3,
      rows: 5,
    });
    expect(acme.columns.find((c: { name: string }) => c.name === 'mw').type).toBe('Int64');
  });

  it("GET /openapi.json: a path per dataset and endpoint, with the product's filters", async () => {
    const doc = ok(await h.get('/openapi.json', null)).body;
    const data = Object.keys(doc.paths).filter((p: string) => p.startsWith('/tide/') || p.startsWith('/acme/'));
    expect(data).toEqual([
      '/tide/level',
      '/tide/level/walk_forward',
      '/tide/level/vintages',
      '/tide/level/asof_join',
      '/acme/load',
      '/acme/load/walk_forward',
      '/acme/load/vintages',
      '/acme/load/asof_join',
    ]);
    const names = (path: string): string[] =>
      doc.paths[path].get.parameters.map((p: { name?: string }) => p.name).filter((n: string | undefined) => n === 'site' || n === 'band');
    expect(names('/acme/load')).toEqual(['site', 'band']);
    expect(names('/acme/load/vintages')).toEqual(['site', 'band']);
    expect(names('/tide/level/walk_forward')).toEqual([]);
    expect(Object.keys(doc.paths).some((p: string) => p.startsWith('/gbsi_eu'))).toBe(false);
  });

  it('the typed client works against the invented datasets', async () => {
    const cat = await client.catalog();
    expect(cat.datasets.map((d) => `${d.product_id}/${d.dataset}`)).toEqual(['tide/level', 'acme/load']);
    const q = await client.query('acme', 'load', { site: 'north', latest: false });
    // by date, then series key: (north, high) before (north, low)
    expect(q.data.map((row) => row['tag'])).toEqual(['nh2', 'nl2b', 'nl4']);
    const pages = [];
    for await (const page of client.pages('tide', 'level', { latest: false, limit: 1 })) pages.push(...page.data.map((row) => row['value']));
    expect(pages).toEqual([1.5, 2, 3, 4]);
    const wf = [];
    for await (const page of client.walkForward('acme', 'load', { decision_from: '2026-03-04', decision_to: '2026-03-04', band: 'low', limit: 1 })) {
      wf.push(...page.data.map((row) => row['tag']));
    }
    expect(wf).toEqual(['nl2a', 'sl3', 'nl4']);
    const vint = [];
    for await (const page of client.vintages('tide', 'level', { date_to: '2026-03-01' })) vint.push(...page.data.map((row) => row['value']));
    expect(vint).toEqual([1, 1.5]);
    const table = await client.arrow('acme', 'load', { latest: false, limit: 2 });
    // one row per (date, series) as known now: nl2b stands for nl2a
    expect(table.numRows).toBe(ACME.length - 1);
    expect(String(table.schema.fields.find((f) => f.name === 'mw')?.type)).toBe('Int64');
    const joined = await client.asofJoin('tide', 'level', [{ at: '2026-03-02T12:00:00Z' }], { columns: ['value'] });
    expect(joined.getChild('value')?.get(0)).toBe(2);
    await expect(client.query('acme', 'load', { band: 'mid' })).rejects.toBeInstanceOf(PitcacheError);
    // (the arrow answer's batches decode with apache-arrow as they are)
    expect(tableFromIPC(await (await client.get('/tide/level', { format: 'arrow' })).arrayBuffer()).numRows).toBe(1);
  });
});
