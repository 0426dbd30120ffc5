/**
 * CSV of an output layout (src/format/csv/csv-layout.ts), written into a deliberately tiny
 * ByteWriter so that every record must reserve its full width: stored columns are read at
 * the page's rows, computed ones (walk_forward's decision_date, vintages' visible_to) at
 * output position, and a computed column replaced by a new Column object is rebound; dates
 * and timestamps, written one byte early, keep the byte before them.
 */
import { describe, expect, it } from 'vitest';
import { CsvLayout } from '../src/format/csv/csv-layout.js';
import type { OutputColumn } from '../src/format/page-view.js';
import { JsonFormatWriter } from '../src/format/json/json-writer.js';
import { ByteWriter } from '../src/format/bytes/byte-writer.js';
import { ROW_SLOT_BYTES } from '../src/format/arenas/row-arena.js';
import { RowCache } from '../src/format/arenas/row-cache.js';
import type { Column, Date32Column, StringDictionary, TimestampColumn } from '../src/store/column.js';
import { rowRequests, rowTable } from './support/row-tables.js';

function dict(values: string[]): StringDictionary {
  const parts = values.map((v) => Buffer.from(v, 'utf8'));
  const utf8Offsets = new Int32Array(values.length + 1);
  parts.forEach((p, i) => (utf8Offsets[i + 1] = utf8Offsets[i]! + p.length));
  return { values, utf8: Buffer.concat(parts), utf8Offsets, rank: Int32Array.from(values.keys()), codeOf: new Map(values.map((v, i) => [v, i])) };
}

const long = 'x'.repeat(300);
const stored: Column[] = [
  { kind: 'date32', name: 'date', validity: null, values: Int32Array.of(20_000, 20_001, 20_002) },
  { kind: 'string', name: 'note', validity: Uint8Array.of(1, 1, 0), codes: Int32Array.of(0, 1, 0), dict: dict([`${long},"q"`, '']) },
  { kind: 'float', name: 'v', validity: null, values: Float64Array.of(1.5, NaN, -2) },
];
const decision = (values: number[]): Date32Column => ({ kind: 'date32', name: 'decision_date', validity: null, values: Int32Array.from(values) });
const visibleTo: TimestampColumn = {
  kind: 'timestamp',
  name: 'visible_to',
  unit: 'us',
  validity: Uint8Array.of(0, 1),
  values: Float64Array.of(0, 1_775_001_600_000_001),
};

function write(layout: CsvLayout, columns: readonly OutputColumn[], rows: ArrayLike<number>): string {
  const out = new ByteWriter(16);
  layout.writeHeader(out);
  layout.writeRecords(out, { columns, rows: Int32Array.from(rows), count: rows.length, seriesKey: [] });
  return Buffer.from(out.view()).toString('utf8');
}

describe('CsvLayout', () => {
  it('writes the header, then stored cells at the page rows and computed cells at output position', () => {
    const columns: OutputColumn[] = [{ column: decision([20_010, 20_011]), at: 'position' }, ...stored.map((column): OutputColumn => ({ column, at: 'row' }))];
    const layout = new CsvLayout(columns);
    // row 2: a null note (empty field) and -2; row 0: the long note, quoted, its quotes doubled
    expect(write(layout, columns, [2, 0])).toBe(`decision_date,date,note,v\n2024-10-14,2024-10-06,,-2\n2024-10-15,2024-10-04,"${long},""q""",1.5\n`);
  });

  it('a computed column replaced by a new Column object is read from the new one', () => {
    const first = decision([20_010]);
    const layout = new CsvLayout([
      { column: first, at: 'position' },
      { column: stored[2]!, at: 'row' },
    ]);
    expect(
      write(
        layout,
        [
          { column: first, at: 'position' },
          { column: stored[2]!, at: 'row' },
        ],
        [1],
      ),
    ).toBe('decision_date,v\n2024-10-14,\n');
    const second = decision([20_011]);
    expect(
      write(
        layout,
        [
          { column: second, at: 'position' },
          { column: stored[2]!, at: 'row' },
        ],
        [0],
      ),
    ).toBe('decision_date,v\n2024-10-15,1.5\n');
  });

  it('vintages: a null visible_to is an empty field, the empty string is ""', () => {
    const columns: OutputColumn[] = [
      { column: stored[1]!, at: 'row' },
      { column: visibleTo, at: 'position' },
    ];
    expect(write(new CsvLayout(columns), columns, [1, 1])).toBe('note,visible_to\n"",\n"",2026-04-01T00:00:00.000001Z\n');
  });
});

describe('CsvLayout with the row cache (stored cells copied, computed cells written)', () => {
  const cols = rowTable(21);
  const atRow = (c: readonly Column[]): OutputColumn[] => c.map((column) => ({ column, at: 'row' }));
  const prefix = decision(Array.from({ length: 64 }, (_, i) => 20_100 + i));
  const suffix: TimestampColumn = {
    kind: 'timestamp',
    name: 'visible_to',
    unit: 'us',
    validity: Uint8Array.from({ length: 64 }, (_, i) => i % 2),
    values: Float64Array.from({ length: 64 }, (_, i) => 1.7e15 + i * 1_000_001),
  };
  const layouts: OutputColumn[][] = [
    atRow(cols),
    [{ column: prefix, at: 'position' }, ...atRow(cols)],
    [...atRow([cols[0]!, cols[3]!]), { column: suffix, at: 'position' }],
    [{ column: prefix, at: 'position' }, ...atRow([cols[1]!]), { column: suffix, at: 'position' }],
  ];

  it('writes exactly the bytes of an uncached layout at every cache size, next to JSON rows of the same generation', () => {
    for (const bytes of [0, 16 * ROW_SLOT_BYTES, 1 << 20]) {
      const cache = RowCache.allocate(bytes);
      cache.register(1, cols);
      const json = new JsonFormatWriter(cache);
      const cached = layouts.map((l) => new CsvLayout(l, cache));
      const plain = layouts.map((l) => new CsvLayout(l));
      for (const rows of rowRequests(bytes)) {
        for (let l = 0; l < layouts.length; l++) expect(write(cached[l]!, layouts[l]!, rows)).toBe(write(plain[l]!, layouts[l]!, rows));
        // JSON text of the same rows in the same arena never comes back as CSV, nor CSV as JSON.
        const view = { columns: atRow(cols), rows, count: rows.length, seriesKey: [] };
        const [a, b] = [new ByteWriter(16), new ByteWriter(16)];
        json.writeRows(a, view);
        new JsonFormatWriter().writeRows(b, view);
        expect(Buffer.from(a.view()).toString()).toBe(Buffer.from(b.view()).toString());
      }
      // One row in turn as CSV and JSON, same generation and columns: only the format tells the two texts apart.
      for (let k = 0; k < 3; k++) {
        const rows = Int32Array.of(7);
        expect(write(cached[0]!, layouts[0]!, rows)).toBe(write(plain[0]!, layouts[0]!, rows));
        const [a, b] = [new ByteWriter(16), new ByteWriter(16)];
        json.writeRows(a, { columns: atRow(cols), rows, count: 1, seriesKey: [] });
        new JsonFormatWriter().writeRows(b, { columns: atRow(cols), rows, count: 1, seriesKey: [] });
        expect(Buffer.from(a.view()).toString()).toBe(Buffer.from(b.view()).toString());
      }
      if (bytes > 0) expect(cache.stats().hits).toBeGreaterThan(0);
    }
  });

  it('copies the stored cells of rows written before, whatever the computed columns around them', () => {
    const cache = RowCache.allocate(1 << 20);
    cache.register(1, cols);
    const rows = Int32Array.from({ length: 30 }, (_, i) => 200 + i);
    const [plain, walk] = [new CsvLayout(layouts[0]!, cache), new CsvLayout(layouts[1]!, cache)];
    const first = write(plain, layouts[0]!, rows);
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 30 });
    expect(write(walk, layouts[1]!, rows)).toBe(write(new CsvLayout(layouts[1]!), layouts[1]!, rows));
    expect(cache.stats()).toMatchObject({ hits: 30, misses: 30 });
    expect(write(plain, layouts[0]!, rows)).toBe(first);
    expect(cache.stats().hits).toBe(60);
  });

  it('does not cache a layout it cannot tag (columns of no registered generation)', () => {
    const cache = RowCache.allocate(1 << 20);
    const layout = new CsvLayout(atRow(rowTable(22)), cache);
    write(layout, atRow(rowTable(22)), [1, 2, 3]);
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 0 });
  });
});

describe('CsvLayout: dates and timestamps written one byte early over the byte before the cell', () => {
  const ts = (unit: 's' | 'ms' | 'us', validity: Uint8Array | null): TimestampColumn => ({
    kind: 'timestamp',
    name: `t_${unit}`,
    unit,
    validity,
    values: Float64Array.of(1_775_001_600_123_456, -1_000_001, 0),
  });
  const date: Date32Column = { kind: 'date32', name: 'd', validity: Uint8Array.of(1, 0, 1), values: Int32Array.of(20_000, 0, -1) };
  const columns: OutputColumn[] = [ts('us', null), date, ts('ms', Uint8Array.of(0, 1, 1)), ts('s', Uint8Array.of(1, 1, 0))].map((column): OutputColumn => ({
    column,
    at: 'row',
  }));
  const expected = [
    't_us,d,t_ms,t_s',
    '2026-04-01T00:00:00.123456Z,2024-10-04,,2026-04-01T00:00:00Z',
    '1969-12-31T23:59:58.999999Z,,1969-12-31T23:59:58.999Z,1969-12-31T23:59:58Z',
    '1970-01-01T00:00:00.000000Z,1969-12-31,1970-01-01T00:00:00.000Z,',
    '',
  ].join('\n');

  it('the same text as the JSON cells unquoted: nulls empty, the bytes before each cell kept, in a writer that grows', () => {
    expect(write(new CsvLayout(columns), columns, [0, 1, 2])).toBe(expected);
  });

  it('a NaN or infinite instant (JSON null) is an empty field, the comma before it kept', () => {
    const d: Date32Column = { kind: 'date32', name: 'd', validity: null, values: Int32Array.of(20_000, 20_001, 20_002) };
    const t: TimestampColumn = { kind: 'timestamp', name: 't', unit: 'us', validity: null, values: Float64Array.of(NaN, Infinity, 1_000_000) };
    const cols: OutputColumn[] = [d, t].map((column): OutputColumn => ({ column, at: 'row' }));
    expect(write(new CsvLayout(cols), cols, [0, 1, 2])).toBe('d,t\n2024-10-04,\n2024-10-05,\n2024-10-06,1970-01-01T00:00:01.000000Z\n');
  });

  it('a record at the very start of the output (no byte before its first cell)', () => {
    const out = new ByteWriter(16);
    new CsvLayout(columns).writeRecords(out, { columns, rows: Int32Array.of(0, 1, 2), count: 3, seriesKey: [] });
    expect(Buffer.from(out.view()).toString('utf8')).toBe(expected.slice(expected.indexOf('\n') + 1));
  });
});
