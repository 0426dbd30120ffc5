import { describe, expect, it } from 'vitest';
import { JsonLayouts, MAX_LAYOUTS_PER_TABLE } from '../src/format/json/json-layouts.js';
import { JsonFormatWriter } from '../src/format/json/json-writer.js';
import type { OutputColumn, PageView } from '../src/format/page-view.js';
import type { PageMeta } from '../src/format/resolved-page.js';
import { ByteWriter } from '../src/format/bytes/byte-writer.js';
import { RowCache } from '../src/format/arenas/row-cache.js';
import { RowRenderer } from '../src/format/json/row-renderer.js';
import type { Column, Date32Column, TimestampColumn } from '../src/store/column.js';
import { buildStringDictionary } from '../src/store/string-dictionary.js';
import { rng } from './support/rng.js';

const ROWS = 60;

function columns(seed: number): Column[] {
  const r = rng(seed);
  return [
    { kind: 'date32', name: 'date', validity: null, values: Int32Array.from({ length: ROWS }, (_, i) => 20000 + i) },
    {
      kind: 'timestamp',
      name: 'str_observed_at',
      unit: 'us',
      validity: null,
      values: Float64Array.from({ length: ROWS }, () => 1.7e15 + Math.floor(r() * 1e13)),
    },
    {
      kind: 'string',
      name: 'country',
      validity: null,
      codes: Int32Array.from({ length: ROWS }, (_, i) => i % 3),
      dict: buildStringDictionary(['DE', 'FR', 'ü"x']),
    },
    {
      kind: 'float',
      name: 'value',
      validity: Uint8Array.from({ length: ROWS }, (_, i) => (i % 7 === 0 ? 0 : 1)),
      values: Float64Array.from({ length: ROWS }, () => Math.round((r() - 0.5) * 1e5) / 100),
    },
    { kind: 'int', name: 'n', validity: null, values: Int32Array.from({ length: ROWS }, (_, i) => i * 37 - 500) },
  ];
}

/** A row cache of its own that knows `cols` as the columns of one generation. */
function cacheFor(cols: readonly Column[], bytes: number): RowCache {
  const cache = RowCache.allocate(bytes);
  cache.register(1, cols);
  return cache;
}

const stored = (cols: readonly Column[]): OutputColumn[] => cols.map((column) => ({ column, at: 'row' }));
const view = (cols: readonly OutputColumn[], rows: readonly number[]): PageView => ({
  columns: cols,
  rows: Int32Array.from(rows),
  count: rows.length,
  seriesKey: ['country'],
});
const text = (out: ByteWriter): string => Buffer.from(out.view()).toString('utf8');

/** The JSON of each stored row, by an independent route: the full RowRenderer output, split per row. */
function storedRows(cols: readonly Column[], rows: readonly number[]): string[] {
  const out = new ByteWriter(16);
  new RowRenderer({ columns: cols }).writeRows(out, Int32Array.from(rows), rows.length);
  return (JSON.parse(text(out)) as object[]).map((o) => JSON.stringify(o));
}

function write(writer: JsonFormatWriter, v: PageView): string {
  const out = new ByteWriter(16);
  writer.writeRows(out, v);
  return text(out);
}

function decisionDates(n: number): Date32Column {
  return { kind: 'date32', name: 'decision_date', validity: null, values: Int32Array.from({ length: n }, (_, i) => 20100 + i) };
}

function visible(name: string, n: number, nullEvery: number): TimestampColumn {
  return {
    kind: 'timestamp',
    name,
    unit: 'us',
    validity: nullEvery === 0 ? null : Uint8Array.from({ length: n }, (_, i) => (i % nullEvery === 0 ? 0 : 1)),
    values: Float64Array.from({ length: n }, (_, i) => 1.75e15 + i * 3_600_000_000),
  };
}

const iso = (days: number): string => new Date(days * 86_400_000).toISOString().slice(0, 10);
const isoUs = (us: number): string => `${new Date(us / 1000).toISOString().slice(0, 19)}.${String(us % 1_000_000).padStart(6, '0')}Z`;

describe('JsonFormatWriter: any output layout', () => {
  const cols = columns(1);
  const rows = [5, 3, 3, 59, 0, 17, 42];

  it('writes the stored columns as the RowRenderer does (the default layout)', () => {
    const out = new ByteWriter(16);
    new RowRenderer({ columns: cols }).writeRows(out, Int32Array.from(rows), rows.length);
    for (const cache of [null, cacheFor(cols, 1 << 20)]) expect(write(new JsonFormatWriter(cache), view(stored(cols), rows))).toBe(text(out));
  });

  it('writes a projection of stored columns: those fields only, in the layout order, with the same values', () => {
    const projection = [cols[0]!, cols[2]!, cols[4]!];
    const got = JSON.parse(write(new JsonFormatWriter(), view(stored(projection), rows))) as Array<Record<string, unknown>>;
    const full = storedRows(cols, rows).map((r) => JSON.parse(r) as Record<string, unknown>);
    expect(got).toEqual(full.map((o) => ({ date: o.date, country: o.country, n: o.n })));
    expect(Object.keys(got[0]!)).toEqual(['date', 'country', 'n']);
  });

  it('puts a computed prefix column first, read at output position: `{"decision_date":"...",` + the stored row', () => {
    const dd = decisionDates(rows.length);
    for (const cache of [null, cacheFor(cols, 1 << 20), cacheFor(cols, 1)]) {
      const got = write(new JsonFormatWriter(cache), view([{ column: dd, at: 'position' }, ...stored(cols)], rows));
      const want = storedRows(cols, rows).map((r, i) => `{"decision_date":"${iso(20100 + i)}",${r.slice(1)}`);
      expect(got).toBe(`[${want.join(',')}]`);
    }
  });

  it('puts computed suffix columns last, nulls included: the stored row + `,"visible_from":...,"visible_to":...}`', () => {
    const from = visible('visible_from', rows.length, 0);
    const to = visible('visible_to', rows.length, 2);
    const layout: OutputColumn[] = [...stored(cols), { column: from, at: 'position' }, { column: to, at: 'position' }];
    for (const cache of [null, cacheFor(cols, 1 << 20)]) {
      const got = write(new JsonFormatWriter(cache), view(layout, rows));
      const want = storedRows(cols, rows).map((r, i) => {
        const vt = i % 2 === 0 ? 'null' : `"${isoUs(to.values[i]!)}"`;
        return `${r.slice(0, -1)},"visible_from":"${isoUs(from.values[i]!)}","visible_to":${vt}}`;
      });
      expect(got).toBe(`[${want.join(',')}]`);
    }
  });

  it('writes prefix, projection and suffix together, and computed columns alone', () => {
    const dd = decisionDates(rows.length);
    const to = visible('visible_to', rows.length, 3);
    const both = write(new JsonFormatWriter(), view([{ column: dd, at: 'position' }, ...stored([cols[0]!]), { column: to, at: 'position' }], rows));
    const parsed = JSON.parse(both) as Array<Record<string, unknown>>;
    expect(Object.keys(parsed[1]!)).toEqual(['decision_date', 'date', 'visible_to']);
    expect(parsed.map((o) => o.date)).toEqual(rows.map((r) => iso(20000 + r)));
    expect(write(new JsonFormatWriter(), view([{ column: dd, at: 'position' }], [9, 9]))).toBe(
      `[{"decision_date":"${iso(20100)}"},{"decision_date":"${iso(20101)}"}]`,
    );
    expect(write(new JsonFormatWriter(), view([{ column: dd, at: 'position' }], []))).toBe('[]');
  });

  it('rebinds computed columns per answer: a second answer with other values writes its own', () => {
    const writer = new JsonFormatWriter(cacheFor(cols, 1 << 20));
    const layout = (c: Date32Column): OutputColumn[] => [{ column: c, at: 'position' }, ...stored(cols)];
    const a = decisionDates(rows.length);
    const b: Date32Column = { ...a, values: a.values.map((d) => d + 1000) };
    expect(write(writer, view(layout(a), rows))).toContain(`"decision_date":"${iso(20100)}"`);
    const second = write(writer, view(layout(b), rows));
    expect(second).toContain(`"decision_date":"${iso(21100)}"`);
    expect(second).not.toContain(`"decision_date":"${iso(20100)}"`);
  });

  it('refuses a stored column after the computed suffix (layouts are prefix, stored, suffix)', () => {
    const to = visible('visible_to', 1, 0);
    expect(() => write(new JsonFormatWriter(), view([...stored([cols[0]!]), { column: to, at: 'position' }, ...stored([cols[1]!])], [0]))).toThrow(/suffix/);
  });
});

describe('JsonFormatWriter and the row cache', () => {
  it('serves the stored part of walk-forward rows from the cache: hits counted, bytes unchanged', () => {
    const cols = columns(2);
    const cache = cacheFor(cols, 1 << 20);
    const writer = new JsonFormatWriter(cache);
    const rows = Array.from({ length: 30 }, (_, i) => i);
    const layout: OutputColumn[] = [{ column: decisionDates(30), at: 'position' }, ...stored(cols)];
    const first = write(writer, view(layout, rows));
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 30 });
    expect(write(writer, view(layout, rows))).toBe(first);
    expect(cache.stats()).toMatchObject({ hits: 30, misses: 30 });
    // The plain layout shares the cached stored rows (same table, same stored columns).
    write(writer, view(stored(cols), rows));
    expect(cache.stats().hits).toBe(60);
  });

  it('keeps projections apart: a projected row is never served for the full row', () => {
    const cols = columns(3);
    const cache = cacheFor(cols, 1 << 20);
    const writer = new JsonFormatWriter(cache);
    const rows = [1, 2, 3];
    const projected = write(writer, view(stored([cols[0]!, cols[2]!]), rows));
    const full = write(writer, view(stored(cols), rows));
    expect(full).not.toBe(projected);
    expect(full).toBe(`[${storedRows(cols, rows).join(',')}]`);
    expect(cache.stats().hits).toBe(0);
  });
});

describe('JsonLayouts: compiled writers per (table, layout), not per request', () => {
  const cols = columns(4);

  it('finds the same compiled layout for the same list and for an equal fresh list', () => {
    const layouts = new JsonLayouts();
    const list = stored(cols);
    const a = layouts.of(list);
    expect(layouts.of(list)).toBe(a);
    expect(layouts.of(stored(cols))).toBe(a);
    expect(layouts.of(stored([cols[0]!, cols[1]!]))).not.toBe(a);
    const dd = decisionDates(2);
    const withPrefix = layouts.of([{ column: dd, at: 'position' }, ...list]);
    expect(withPrefix).not.toBe(a);
    expect(layouts.of([{ column: decisionDates(5), at: 'position' }, ...stored(cols)])).toBe(withPrefix);
  });

  it('keeps tables apart and bounds the layouts of one table', () => {
    const layouts = new JsonLayouts();
    const other = columns(4);
    expect(layouts.of(stored(other))).not.toBe(layouts.of(stored(cols)));
    const first = layouts.of(stored([cols[0]!]));
    expect(layouts.of(stored([cols[0]!]))).toBe(first);
    const extra = Array.from({ length: MAX_LAYOUTS_PER_TABLE }, (_, i) => visible(`c${i}`, 1, 0));
    for (const c of extra) layouts.of([...stored([cols[0]!]), { column: c, at: 'position' }]);
    // The oldest layout of this table was dropped: an equal fresh list compiles anew.
    expect(layouts.of(stored([cols[0]!]))).not.toBe(first);
  });
});

describe('JsonFormatWriter: middle and suffix', () => {
  it('writes the envelope up to data and a per-request metadata suffix, data_age_hours measured from as_of or now', () => {
    const cols = columns(5);
    const writer = new JsonFormatWriter();
    const meta: PageMeta = {
      productId: 'gbsi_eu',
      count: 1,
      totalCount: 3,
      nextCursor: 'abc',
      generation: 7,
      dataLatestDate: 20001,
      maxObservedUs: 1_000 * 3_600_000_000,
      asOfUs: null,
      floorApplied: false,
      extensionKeys: ['generation'],
      extensionValues: [7],
    };
    const out = new ByteWriter(16);
    writer.writeMiddle(out, { view: view(stored([cols[0]!]), [1]), meta });
    writer.writeSuffix(out, meta, { retrievedAtUs: 1_010 * 3_600_000_000, recordId: 'req_1' });
    const body = JSON.parse(text(out));
    expect(body).toEqual({
      product_id: 'gbsi_eu',
      count: 1,
      has_more: true,
      next_cursor: 'abc',
      data: [{ date: iso(20001) }],
      metadata: {
        retrieved_at: new Date(1_010 * 3_600_000).toISOString(),
        total_count: 3,
        record_id: 'req_1',
        data_latest_date: iso(20001),
        data_age_hours: 10,
        generation: 7,
      },
    });
    const asOf = new ByteWriter(16);
    writer.writeSuffix(asOf, { ...meta, asOfUs: 1_004 * 3_600_000_000 }, { retrievedAtUs: 1_010 * 3_600_000_000, recordId: 'req_2' });
    expect(text(asOf)).toContain('"data_age_hours":4,');
    expect(writer.contentType).toBe('application/json');
  });
});
