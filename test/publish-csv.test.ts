import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalSource } from '../src/source/local-source.js';
import { decodeArrowTable } from '../src/publish/arrow-input.js';
import { CsvParser, parseCsv, type CsvCell } from '../src/publish/csv-parse.js';
import { describeType, readArrowSchema } from '../src/publish/dataset-schema.js';
import { publish, type PublishRequest, type PublishResult } from '../src/publish/publish.js';
import { cellValue } from '../src/publish/version-table.js';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { parseManifest } from '../src/snapshot/manifest.js';
import { parseRfc3339 } from '../src/time/instant.js';

const D = (s: string): number => Math.round(Date.parse(s + 'T00:00:00Z') / 86_400_000);
const US = (s: string): number => parseRfc3339(s)!;

describe('parseCsv (RFC 4180)', () => {
  it('reads quoted fields with commas, doubled quotes and line breaks, CRLF records and a BOM', () => {
    const doc = parseCsv('\ufeffa,b,c\r\n"x, y","say ""hi""","two\r\nlines"\r\nplain,,""\r\n');
    expect(doc.header).toEqual(['a', 'b', 'c']);
    expect(doc.rows).toEqual([
      ['x, y', 'say "hi"', 'two\r\nlines'],
      ['plain', null, ''],
    ]);
    expect(doc.lines).toEqual([2, 4]);
  });

  it('accepts LF records, no final newline and a trailing blank line', () => {
    expect(parseCsv('a,b\n1,2').rows).toEqual([['1', '2']]);
    expect(parseCsv('a,b\n1,2\n\n').rows).toEqual([['1', '2']]);
  });

  it('reads the same records wherever the text is cut into chunks (inside quotes, doubled quotes, CRLF), in batches', () => {
    const text = '\ufeffa,b,c\r\n"x, y","say ""hi""","two\r\nlines"\r\nplain,,""\r\n"q""",z,\n1,2,3\r"4",5,6\n\n\n';
    const whole = parseCsv(text);
    expect(whole.rows).toHaveLength(5);
    const read = (cuts: readonly number[]): { rows: CsvCell[][]; lines: number[] } => {
      const rows: CsvCell[][] = [];
      const lines: number[] = [];
      const parser = new CsvParser((b) => {
        expect(b.rows.length).toBeLessThanOrEqual(2);
        rows.push(...b.rows);
        lines.push(...b.lines);
      }, 2);
      let at = 0;
      for (const cut of [...cuts, text.length]) {
        parser.push(text.slice(at, cut));
        at = cut;
      }
      parser.end();
      expect(parser.header).toEqual(['a', 'b', 'c']);
      return { rows, lines };
    };
    for (let i = 0; i <= text.length; i++) {
      for (const j of [i, i + 1, i + 2, i + 7]) {
        expect(read([i, Math.min(j, text.length)]), `cut at ${i}, ${j}`).toEqual({ rows: whole.rows, lines: whole.lines });
      }
    }
    const open = new CsvParser(() => {});
    open.push('a,b\n1,"no');
    open.push('t closed');
    expect(() => open.end()).toThrow('line 2: a quoted field is not closed');
  });

  it('names the line of a malformed record', () => {
    expect(() => parseCsv('a,b\n1,2\n3\n')).toThrow('line 3: 1 field(s), the header has 2');
    expect(() => parseCsv('a,b\n"1"x,2\n')).toThrow('line 2: text after the closing quote');
    expect(() => parseCsv('a,b\n1,"open\n')).toThrow('line 2: a quoted field is not closed');
    expect(() => parseCsv('a,b\n1,x"y\n')).toThrow(/line 2: a quote inside an unquoted field/);
    expect(() => parseCsv('a,a\n')).toThrow(/appears twice/);
    expect(() => parseCsv('')).toThrow(/empty/);
  });
});

let dir: string;
let source: LocalSource;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pitcache-publish-csv-'));
  source = new LocalSource(dir);
});
afterEach(() => rm(dir, { recursive: true, force: true }));

function run(productId: string, dataset: string, text: string, extra: Partial<PublishRequest> = {}): Promise<PublishResult> {
  return publish({
    source,
    productId,
    dataset,
    input: { format: 'csv', text },
    rebuild: false,
    replace: false,
    seriesKey: null,
    publishedAtUs: US('2026-05-01T00:00:00Z'),
    ...extra,
  });
}

async function stored(productId: string, dataset: string) {
  const r = await source.readIfChanged(`${productId}/${dataset}/manifest.json`, null);
  if (r.status !== 'ok') throw new Error('no manifest');
  const bytes = await source.readObject(`${productId}/${dataset}/${parseManifest(r.bytes).object}`);
  const table = decodeArrowTable(bytes, []);
  const rows = Array.from({ length: table.rows }, (_, row) =>
    Object.fromEntries(table.schema.columns.map((def, c) => [def.name, cellValue(table.columns[c]!, row)])),
  );
  return { schema: readArrowSchema(bytes), rows };
}

const FIRST = [
  'date,str_effective_at,str_observed_at,str_ingested_at,model_version,geography,region_type,stress,label,is_final',
  '2026-04-01,2026-04-01,2026-04-01T06:00:00Z,2026-04-01T06:30:00.250Z,1.0,US,"national, all",0.25,"He said ""go""",true',
  '2026-04-01,2026-04-01,2026-04-01T08:00:00+02:00,2026-04-01T06:30:00Z,1.0,ERCOT,grid,NaN,"two',
  'lines",FALSE',
  '2026-04-02,2026-04-02,2026-04-02T06:00:00Z,2026-04-02T06:30:00Z,1.0,US,"national, all",,"",',
].join('\r\n');

describe('publish: CSV input', () => {
  it('infers the types of a first publish and reads quoting, offsets, NaN and nulls', async () => {
    const r = await run('wrsi', 'forecast_stress', FIRST, { seriesKey: ['geography', 'region_type'] });
    expect(r).toMatchObject({ status: 'published', added: 3, newKeys: 3 });
    const { schema, rows } = await stored('wrsi', 'forecast_stress');
    expect(schema.columns.map((c) => `${c.name}:${describeType(c)}`)).toEqual([
      'date:date32',
      'str_effective_at:date32',
      'str_observed_at:timestamp[us]',
      'str_ingested_at:timestamp[us]',
      'model_version:utf8',
      'geography:utf8',
      'region_type:utf8',
      'stress:float64',
      'label:utf8',
      'is_final:bool',
    ]);
    expect(schema.seriesKey).toEqual(['geography', 'region_type']);
    // Stored in the server's order: series by key bytes (ERCOT < US), then date.
    expect(rows).toEqual([
      {
        date: D('2026-04-01'),
        str_effective_at: D('2026-04-01'),
        str_observed_at: US('2026-04-01T06:00:00Z'),
        str_ingested_at: US('2026-04-01T06:30:00Z'),
        model_version: '1.0',
        geography: 'ERCOT',
        region_type: 'grid',
        stress: NaN,
        label: 'two\r\nlines',
        is_final: false,
      },
      {
        date: D('2026-04-01'),
        str_effective_at: D('2026-04-01'),
        str_observed_at: US('2026-04-01T06:00:00Z'),
        str_ingested_at: US('2026-04-01T06:30:00.250Z'),
        model_version: '1.0',
        geography: 'US',
        region_type: 'national, all',
        stress: 0.25,
        label: 'He said "go"',
        is_final: true,
      },
      {
        date: D('2026-04-02'),
        str_effective_at: D('2026-04-02'),
        str_observed_at: US('2026-04-02T06:00:00Z'),
        str_ingested_at: US('2026-04-02T06:30:00Z'),
        model_version: '1.0',
        geography: 'US',
        region_type: 'national, all',
        stress: null,
        label: '',
        is_final: null,
      },
    ]);
  });

  it('reads a later CSV in the stored schema (dictionary, float32, int16, ms timestamps kept) and adds only revisions', async () => {
    const first = buildArrowSnapshot({
      seriesKey: ['country'],
      columns: [
        { name: 'date', type: 'date32', values: [D('2026-04-01'), D('2026-04-01')] },
        { name: 'str_effective_at', type: 'timestamp', unit: 's', values: [US('2026-04-03T00:00:00Z') / 1e6, US('2026-04-03T00:00:00Z') / 1e6] },
        { name: 'str_observed_at', type: 'timestamp', unit: 'ms', values: [US('2026-04-03T06:00:00Z') / 1e3, US('2026-04-03T06:00:00Z') / 1e3] },
        { name: 'str_ingested_at', type: 'timestamp', unit: 'ms', values: [US('2026-04-03T07:00:00Z') / 1e3, US('2026-04-03T07:00:00Z') / 1e3] },
        { name: 'model_version', type: 'utf8', values: ['1.0', '1.0'] },
        { name: 'country', type: 'dict-utf8', values: ['DE', 'FR'] },
        { name: 'stress', type: 'float32', values: [0.1, 0.2] },
        { name: 'events', type: 'int16', values: [3, null] },
      ],
    });
    await publish({
      source,
      productId: 'gbsi_eu',
      dataset: 'system_stress',
      input: { format: 'arrow', bytes: first },
      rebuild: false,
      replace: false,
      seriesKey: null,
      publishedAtUs: US('2026-05-01T00:00:00Z'),
    });
    const csv = [
      'country,date,str_effective_at,str_observed_at,str_ingested_at,model_version,stress,events',
      // DE: 0.1 read as float32 equals the stored value; FR: events 4 is a revision.
      'DE,2026-04-01,2026-04-03T00:00:00Z,2026-04-09T06:00:00.000Z,2026-04-09T07:00:00Z,1.0,0.1,3',
      'FR,2026-04-01,2026-04-03T00:00:00Z,2026-04-09T06:00:00.000Z,2026-04-09T07:00:00Z,1.0,0.2,4',
    ].join('\n');
    const r = await run('gbsi_eu', 'system_stress', csv);
    expect(r).toMatchObject({ status: 'published', added: 1, newKeys: 0 });
    const { schema, rows } = await stored('gbsi_eu', 'system_stress');
    expect(schema.columns.map((c) => `${c.name}:${describeType(c)}`)).toEqual([
      'date:date32',
      'str_effective_at:timestamp[s]',
      'str_observed_at:timestamp[ms]',
      'str_ingested_at:timestamp[ms]',
      'model_version:utf8',
      'country:dict-utf8',
      'stress:float32',
      'events:int16',
    ]);
    expect(rows.map((x) => [x.country, x.events, x.str_observed_at])).toEqual([
      ['DE', 3, US('2026-04-03T06:00:00Z')],
      ['FR', null, US('2026-04-03T06:00:00Z')],
      ['FR', 4, US('2026-04-09T06:00:00Z')],
    ]);
  });

  it('names the line and column of a cell that does not fit its type', async () => {
    await run('wrsi', 'forecast_stress', FIRST, { seriesKey: ['geography', 'region_type'] });
    const bad = FIRST.replace(',0.25,', ',high,');
    await expect(run('wrsi', 'forecast_stress', bad)).rejects.toThrow('line 2: stress must be a number (float64), got "high"');
    const noDate = FIRST.replace('2026-04-02,2026-04-02,', ',2026-04-02,');
    await expect(run('wrsi', 'forecast_stress', noDate)).rejects.toThrow('line 5: date is empty (it is required)');
  });
});
