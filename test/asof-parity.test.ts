import { tableFromIPC, type Table as ArrowTable } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asofCommand } from '../src/cli/asof-command.js';
import { parseCsv } from '../src/publish/csv-parse.js';
import { MemoryOutput } from '../src/publish/output.js';
import type { ColumnSpec, SnapshotSpec } from '../src/snapshot/arrow-writer.js';
import { ManualClock } from '../src/time/clock.js';
import { TEST_KEY, startHarness, type Harness } from './support/harness.js';

/**
 * Spec section 1, rule 5: an answer rebuilt from the stored files equals the API's. For
 * each query, `pitcache asof --format json` prints exactly the rows of the API's `data`
 * arrays over its whole cursor chain (small pages, so the chain is long), and the CSV
 * output reads back to the same values. asof goes through the server's stages and writers
 * (pipeline/answer-chain.ts), so its bytes are the server's: a real server's body for the
 * same query (csv), its `data` array (json) and its record batch (arrow), and over a chain
 * of small pages, the pages joined.
 */
const DAY_US = 86_400_000_000;
const D = (s: string): number => Math.round(Date.parse(s + 'T00:00:00Z') / 86_400_000);

/** A deterministic generator (no wall clock, no Math.random). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

interface Version {
  series: string[];
  day: number;
  obsUs: number;
  ingUs: number;
}

/**
 * Keys over 14 days around the glmi/pemi floor (2026-03-02), each with one to three
 * versions: restatements days later, same-observed versions told apart by ingested only,
 * and versions observed before the floor.
 */
function versions(series: string[][], seed: number): Version[] {
  const rnd = lcg(seed);
  const out: Version[] = [];
  for (let day = D('2026-02-24'); day < D('2026-03-10'); day++) {
    for (const s of series) {
      if (rnd() < 0.15) continue;
      const obs = (day + 1) * DAY_US + Math.floor(rnd() * 12) * 3_600_000_000;
      out.push({ series: s, day, obsUs: obs, ingUs: obs + 60_000_000 });
      if (rnd() < 0.4) out.push({ series: s, day, obsUs: obs + Math.ceil(rnd() * 4) * DAY_US, ingUs: obs + 5 * DAY_US });
      if (rnd() < 0.2) out.push({ series: s, day, obsUs: obs, ingUs: obs + 120_000_000 });
    }
  }
  // Any order: the loader sorts (contract 6).
  return out.reverse();
}

function glmiSpec(): SnapshotSpec {
  const vs = versions([['atlantic'], ['middle_east'], ['pacific']], 7);
  const rnd = lcg(11);
  const notes = ['plain', 'with, comma', 'say "hi"', 'two\nlines', '', null, 'ünïcødé ✓'];
  const columns: ColumnSpec[] = [
    { name: 'date', type: 'date32', values: vs.map((v) => v.day) },
    { name: 'str_effective_at', type: 'date32', values: vs.map((v) => v.day + 1) },
    { name: 'str_observed_at', type: 'timestamp', unit: 'us', values: vs.map((v) => v.obsUs) },
    { name: 'str_ingested_at', type: 'timestamp', unit: 'ms', values: vs.map((v) => v.ingUs / 1000) },
    { name: 'model_version', type: 'utf8', values: vs.map(() => '1.0') },
    { name: 'basin', type: 'dict-utf8', values: vs.map((v) => v.series[0]!) },
    { name: 'value', type: 'float64', values: vs.map((_, i) => (i % 17 === 0 ? NaN : i % 13 === 0 ? null : Math.round(rnd() * 1e6) / 1e3 - 400)) },
    { name: 'note', type: 'utf8', values: vs.map((_, i) => notes[i % notes.length]!) },
    { name: 'flag', type: 'bool', values: vs.map((_, i) => (i % 5 === 0 ? null : i % 2 === 0)) },
    { name: 'big', type: 'int64', values: vs.map((_, i) => (i % 3 === 0 ? 2n ** 53n + BigInt(i) : BigInt(i) - 5n)) },
  ];
  return { columns, seriesKey: ['basin'] };
}

function wrsiSpec(): SnapshotSpec {
  const vs = versions(
    [
      ['ERCOT', 'grid'],
      ['US', 'national'],
      ['US', 'state'],
      ['PJM', 'grid'],
    ],
    3,
  );
  const rnd = lcg(5);
  const columns: ColumnSpec[] = [
    { name: 'date', type: 'date32', values: vs.map((v) => v.day) },
    { name: 'str_effective_at', type: 'timestamp', unit: 's', values: vs.map((v) => (v.day * DAY_US) / 1e6) },
    { name: 'str_observed_at', type: 'timestamp', unit: 's', values: vs.map((v) => v.obsUs / 1e6) },
    { name: 'str_ingested_at', type: 'timestamp', unit: 's', values: vs.map((v) => v.ingUs / 1e6) },
    { name: 'model_version', type: 'utf8', values: vs.map(() => '1.0') },
    { name: 'geography', type: 'utf8', values: vs.map((v) => v.series[0]!) },
    { name: 'region_type', type: 'dict-utf8', values: vs.map((v) => v.series[1]!) },
    { name: 'stress', type: 'float32', values: vs.map(() => Math.fround(rnd() * 3)) },
    { name: 'events', type: 'int16', values: vs.map((_, i) => i % 7) },
  ];
  return { columns, seriesKey: ['geography', 'region_type'] };
}

/** API query parameters; the asof flags are the same names with dashes. */
type Params = Record<string, string>;

const QUERIES: ReadonlyArray<readonly [string, string, Params]> = [
  ['glmi', 'marginality', {}],
  ['glmi', 'marginality', { latest: 'false' }],
  ['glmi', 'marginality', { date_from: '2026-02-27', date_to: '2026-03-04' }],
  ['glmi', 'marginality', { as_of: '2026-02-27' }],
  ['glmi', 'marginality', { as_of: '2026-02-27', latest: 'false' }],
  ['glmi', 'marginality', { as_of: '2026-03-05', latest: 'false' }],
  ['glmi', 'marginality', { as_of: '2026-03-06T12:00:00Z', date_from: '2026-03-01' }],
  ['glmi', 'marginality', { as_of: '2026-03-08T06:30:00+02:00', date_to: '2026-03-06' }],
  ['glmi', 'marginality', { basin: 'pacific,atlantic', latest: 'false' }],
  ['glmi', 'marginality', { basin: 'middle_east', as_of: '2026-03-04', date_from: '2026-02-01', date_to: '2026-03-04' }],
  ['glmi', 'marginality', { date_to: '2026-02-20' }],
  ['wrsi', 'forecast_stress', {}],
  ['wrsi', 'forecast_stress', { geography: 'US', latest: 'false' }],
  ['wrsi', 'forecast_stress', { region_type: 'grid', as_of: '2026-03-03' }],
  ['wrsi', 'forecast_stress', { geography: 'US,ERCOT', region_type: 'grid,state', date_from: '2026-03-01', as_of: '2026-03-09' }],
];

describe('asof rebuilds the API answer from the stored files', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      datasets: [
        { productId: 'glmi', dataset: 'marginality', spec: glmiSpec(), generation: 3 },
        { productId: 'wrsi', dataset: 'forecast_stress', spec: wrsiSpec(), format: 'stream' },
      ],
    });
  });
  afterAll(() => h.close());

  /** `data` of every page of the API's cursor chain, concatenated. */
  async function apiRows(product: string, dataset: string, params: Params): Promise<unknown[]> {
    const rows: unknown[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 1000; page++) {
      const q = new URLSearchParams({ ...params, limit: '7', ...(cursor === null ? {} : { cursor }) });
      const r = await h.get(`/${product}/${dataset}?${q.toString()}`);
      expect(r.status, r.text).toBe(200);
      rows.push(...r.body.data);
      if (!r.body.has_more) return rows;
      cursor = r.body.next_cursor;
    }
    throw new Error('cursor chain does not end');
  }

  /** The API's pages of one format over the whole chain (cursor from x-next-cursor). */
  async function apiPages(product: string, dataset: string, params: Params, format: 'csv' | 'arrow'): Promise<Buffer[]> {
    const pages: Buffer[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 1000; page++) {
      const q = new URLSearchParams({ ...params, limit: '7', format, ...(cursor === null ? {} : { cursor }) });
      const r = await fetch(`${h.url}/${product}/${dataset}?${q.toString()}`, { headers: { 'x-api-key': TEST_KEY } });
      expect(r.status).toBe(200);
      pages.push(Buffer.from(await r.arrayBuffer()));
      cursor = r.headers.get('x-next-cursor');
      if (cursor === null) return pages;
    }
    throw new Error('cursor chain does not end');
  }

  async function asofBytes(product: string, dataset: string, params: Params, format: 'arrow'): Promise<Buffer> {
    const flags = Object.entries(params).flatMap(([k, v]) => [`--${k.replace(/_/g, '-')}`, v]);
    const io = { stdout: new MemoryOutput(), stderr: new MemoryOutput() };
    const code = await asofCommand(['--source', h.dir, '--product', product, '--dataset', dataset, ...flags, '--format', format], {}, io, new ManualClock(0));
    expect(code).toBe(0);
    return io.stdout.bytes();
  }

  async function asof(product: string, dataset: string, params: Params, format: 'json' | 'csv'): Promise<string> {
    const flags = Object.entries(params).flatMap(([k, v]) => [`--${k.replace(/_/g, '-')}`, v]);
    const io = { stdout: new MemoryOutput(), stderr: new MemoryOutput() };
    const code = await asofCommand(['--source', h.dir, '--product', product, '--dataset', dataset, ...flags, '--format', format], {}, io, new ManualClock(0));
    expect(io.stderr.text()).toBe('');
    expect(code).toBe(0);
    return io.stdout.text();
  }

  it.each(QUERIES)('%s/%s %j: json equals the API rows, csv reads back to them', async (product, dataset, params) => {
    const expected = await apiRows(product, dataset, params);
    const json = await asof(product, dataset, params, 'json');
    expect(JSON.parse(json)).toEqual(expected);

    const doc = parseCsv(await asof(product, dataset, params, 'csv'));
    const first = expected[0] as Record<string, unknown> | undefined;
    if (first !== undefined) expect(doc.header).toEqual(Object.keys(first));
    expect(doc.rows).toHaveLength(expected.length);
    doc.rows.forEach((cells, r) => {
      const row = expected[r] as Record<string, unknown>;
      doc.header.forEach((name, c) => expect(csvMeans(cells[c]!, row[name]), `${name} of row ${r}`).toBe(true));
    });
  });

  it.each(QUERIES)(
    '%s/%s %j: csv is the API csv pages joined byte for byte; arrow holds the API arrow pages rows, typed the same',
    async (product, dataset, params) => {
      const csvPages = await apiPages(product, dataset, params, 'csv');
      const header = csvPages[0]!.toString().split('\n')[0]! + '\n';
      const joined = header + csvPages.map((p) => p.toString().slice(header.length)).join('');
      expect(await asof(product, dataset, params, 'csv')).toBe(joined);

      const fileTable = tableFromIPC(await asofBytes(product, dataset, params, 'arrow'));
      const apiTables = (await apiPages(product, dataset, params, 'arrow')).map((b) => tableFromIPC(b));
      expect(fileTable.schema.fields.map((f) => `${f.name}:${String(f.type)}`)).toEqual(apiTables[0]!.schema.fields.map((f) => `${f.name}:${String(f.type)}`));
      const rowsOf = (t: ArrowTable): string[] => t.toArray().map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
      expect(rowsOf(fileTable)).toEqual(apiTables.flatMap(rowsOf));
    },
  );

  /** The server's body for the query in one format, with the largest page asof uses (one page for these datasets). */
  async function apiBody(product: string, dataset: string, params: Params, format: 'json' | 'csv' | 'arrow', extra: Params = {}): Promise<Response> {
    const q = new URLSearchParams({ ...params, limit: '10000', format, ...extra });
    const r = await fetch(`${h.url}/${product}/${dataset}?${q.toString()}`, { headers: { 'x-api-key': TEST_KEY } });
    expect(r.status).toBe(200);
    return r;
  }

  it.each(QUERIES)(
    '%s/%s %j: asof writes the bytes of the server body (csv), of its data array (json), of its record batch (arrow)',
    async (product, dataset, params) => {
      const csvBody = Buffer.from(await (await apiBody(product, dataset, params, 'csv')).arrayBuffer());
      expect(Buffer.from(await asof(product, dataset, params, 'csv')).equals(csvBody)).toBe(true);

      const jsonBody = await (await apiBody(product, dataset, params, 'json')).text();
      expect(JSON.parse(jsonBody).has_more).toBe(false);
      expect(await asof(product, dataset, params, 'json')).toBe(dataArray(jsonBody) + '\n');

      const arrowBody = Buffer.from(await (await apiBody(product, dataset, params, 'arrow')).arrayBuffer());
      const file = await asofBytes(product, dataset, params, 'arrow');
      // The schema messages differ by the envelope alone (the file channel has none); what follows is the same bytes.
      expect(file.subarray(schemaEnd(file)).equals(arrowBody.subarray(schemaEnd(arrowBody)))).toBe(true);
      const fileSchema = tableFromIPC(file).schema;
      const apiSchema = tableFromIPC(arrowBody).schema;
      expect(fileSchema.fields.map((f) => `${f.name}:${String(f.type)}:${f.nullable}`)).toEqual(
        apiSchema.fields.map((f) => `${f.name}:${String(f.type)}:${f.nullable}`),
      );
      expect([...fileSchema.metadata]).toEqual([...apiSchema.metadata].filter(([k]) => k !== 'pitcache.envelope'));
    },
  );

  it.each(QUERIES)('%s/%s %j: asof json is the data arrays of the API pages joined byte for byte', async (product, dataset, params) => {
    const arrays: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await apiBody(product, dataset, params, 'json', { limit: '7', ...(cursor === null ? {} : { cursor }) });
      const body = await r.text();
      arrays.push(dataArray(body));
      cursor = (JSON.parse(body) as { next_cursor?: string }).next_cursor ?? null;
    } while (cursor !== null);
    const joined =
      '[' +
      arrays
        .map((a) => a.slice(1, -1))
        .filter((a) => a !== '')
        .join(',') +
      ']\n';
    expect(await asof(product, dataset, params, 'json')).toBe(joined);
  });

  it('covers answers that are empty, one page and several pages', async () => {
    const sizes = await Promise.all(QUERIES.map(([p, d, q]) => apiRows(p, d, q).then((rows) => rows.length)));
    expect(sizes.some((n) => n === 0)).toBe(true);
    expect(sizes.some((n) => n > 0 && n <= 7)).toBe(true);
    expect(sizes.some((n) => n > 21)).toBe(true);
  });
});

/** Whether a CSV cell holds the value the API rendered in JSON. */
function csvMeans(cell: string | null, json: unknown): boolean {
  if (json === null) return cell === null;
  if (typeof json === 'number') return cell !== null && Number(cell) === json;
  if (typeof json === 'boolean') return cell === String(json);
  return cell === json;
}

/** The `data` array of a JSON answer, as the bytes the server wrote (it stands between `"data":` and `,"metadata":`). */
function dataArray(body: string): string {
  const start = body.indexOf(',"data":[') + ',"data":'.length;
  const end = body.lastIndexOf('],"metadata":{') + 1;
  expect(start).toBeGreaterThan(8);
  expect(end).toBeGreaterThan(start);
  return body.slice(start, end);
}

/** Where an Arrow IPC stream's first message (the schema, which has no body) ends: continuation, length, metadata. */
function schemaEnd(stream: Uint8Array): number {
  const b = Buffer.from(stream.buffer, stream.byteOffset, stream.byteLength);
  expect(b.readUInt32LE(0)).toBe(0xffffffff);
  return 8 + b.readInt32LE(4);
}
