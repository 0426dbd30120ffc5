/**
 * Contract 4 over HTTP: every Arrow type of contract 6 as JSON, columns in schema order,
 * and the envelope (spec 2.4). Metadata fields are in contract-metadata.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SnapshotSpec } from '../src/snapshot/arrow-writer.js';
import { startInProcessHarness, type Harness } from './support/harness.js';
import { day, micros, rowsOf } from './support/fixtures.js';

const N = 6;
const same = <T>(v: T): T[] => Array.from({ length: N }, () => v);
const sec = (iso: string) => micros(iso) / 1_000_000;
const ms = (iso: string) => micros(iso) / 1000;

const TRICKY = 'q " b \\ n \n t \t c \u0001 \u001f d \u007f ls \u2028 \u00e9 \u{1F600} </script>';

// Required columns are not first: the answer must follow the schema, not a fixed list.
const SPEC: SnapshotSpec = {
  seriesKey: ['series'],
  batchRows: 4,
  columns: [
    { name: 'note', type: 'utf8', values: ['plain', TRICKY, null, '', ' ', '\u0000'] },
    { name: 'date', type: 'date32', values: same(day('2026-04-01')) },
    { name: 'series', type: 'dict-utf8', values: ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'] },
    { name: 'str_effective_at', type: 'timestamp', unit: 's', values: same(sec('2026-04-01T00:00:00Z')) },
    {
      name: 'str_observed_at',
      type: 'timestamp',
      unit: 'ms',
      values: [ms('2026-04-01T06:07:08.009Z'), ms('2026-04-01T06:00:00Z'), ms('2026-04-01T06:00:00.5Z'), 0, 1, ms('2026-04-01T06:00:00.12Z')],
    },
    {
      name: 'str_ingested_at',
      type: 'timestamp',
      unit: 'us',
      values: [
        micros('2026-04-01T06:07:08.000001Z'),
        micros('2026-04-01T06:00:00Z'),
        micros('2026-04-01T06:00:00.123456Z'),
        0,
        10,
        micros('2026-04-01T06:00:00.1Z'),
      ],
    },
    { name: 'model_version', type: 'utf8', values: same('1.0') },
    { name: 'f64', type: 'float64', values: [0.1, -123.456, 5e-324, 1.7976931348623157e308, 1e21, 123456789.12345679] },
    { name: 'f64_special', type: 'float64', values: [NaN, Infinity, -Infinity, null, 0, -1.5] },
    { name: 'f32', type: 'float32', values: [0.1, 3.4028234663852886e38, 1.401298464324817e-45, -2.5, NaN, Infinity] },
    { name: 'i8', type: 'int8', values: [-128, 127, 0, null, 1, -1] },
    { name: 'i16', type: 'int16', values: [-32768, 32767, 0, null, 1, -1] },
    { name: 'i32', type: 'int32', values: [-2147483648, 2147483647, 0, null, 1, -1] },
    { name: 'i64', type: 'int64', values: [2n ** 53n - 1n, -(2n ** 53n - 1n), 2n ** 53n + 1n, 2n ** 63n - 1n, -(2n ** 63n), null] },
    { name: 'u8', type: 'uint8', values: [0, 255, null, 1, 128, 7] },
    { name: 'u16', type: 'uint16', values: [0, 65535, null, 1, 32768, 7] },
    { name: 'u32', type: 'uint32', values: [0, 4294967295, null, 1, 2147483648, 7] },
    { name: 'flag', type: 'bool', values: [true, false, null, true, false, true] },
    { name: 'd', type: 'date32', values: [day('1969-12-31'), day('2000-02-29'), day('9999-12-31'), null, 0, day('2026-04-01')] },
    { name: 'ts_s', type: 'timestamp', unit: 's', values: [0, -1, null, sec('2026-04-01T06:07:08Z'), 1, 59] },
    { name: 'ts_ms', type: 'timestamp', unit: 'ms', values: [0, -1, 1234, null, ms('2026-04-01T06:07:08.900Z'), 60_000] },
    { name: 'ts_us', type: 'timestamp', unit: 'us', values: [0, -1, 1, null, micros('2026-04-01T06:07:08.123456Z'), 1_000_000] },
    { name: 'label', type: 'dict-utf8', values: [TRICKY, 'x', null, TRICKY, '"', '\\'] },
  ],
};

/** What each row must render as, written from the column list above. */
const EXPECTED: Array<Record<string, unknown>> = [
  {
    note: 'plain',
    str_effective_at: '2026-04-01T00:00:00Z',
    str_observed_at: '2026-04-01T06:07:08.009Z',
    str_ingested_at: '2026-04-01T06:07:08.000001Z',
    f64: 0.1,
    f64_special: null,
    i8: -128,
    i16: -32768,
    i32: -2147483648,
    i64: 9007199254740991,
    u8: 0,
    u16: 0,
    u32: 0,
    flag: true,
    d: '1969-12-31',
    ts_s: '1970-01-01T00:00:00Z',
    ts_ms: '1970-01-01T00:00:00.000Z',
    ts_us: '1970-01-01T00:00:00.000000Z',
    label: TRICKY,
  },
  {
    note: TRICKY,
    str_effective_at: '2026-04-01T00:00:00Z',
    str_observed_at: '2026-04-01T06:00:00.000Z',
    str_ingested_at: '2026-04-01T06:00:00.000000Z',
    f64: -123.456,
    f64_special: null,
    i8: 127,
    i16: 32767,
    i32: 2147483647,
    i64: -9007199254740991,
    u8: 255,
    u16: 65535,
    u32: 4294967295,
    flag: false,
    d: '2000-02-29',
    ts_s: '1969-12-31T23:59:59Z',
    ts_ms: '1969-12-31T23:59:59.999Z',
    ts_us: '1969-12-31T23:59:59.999999Z',
    label: 'x',
  },
  {
    note: null,
    str_effective_at: '2026-04-01T00:00:00Z',
    str_observed_at: '2026-04-01T06:00:00.500Z',
    str_ingested_at: '2026-04-01T06:00:00.123456Z',
    f64: 5e-324,
    f64_special: null,
    i8: 0,
    i16: 0,
    i32: 0,
    i64: '9007199254740993',
    u8: null,
    u16: null,
    u32: null,
    flag: null,
    d: '9999-12-31',
    ts_s: null,
    ts_ms: '1970-01-01T00:00:01.234Z',
    ts_us: '1970-01-01T00:00:00.000001Z',
    label: null,
  },
  {
    note: '',
    str_effective_at: '2026-04-01T00:00:00Z',
    str_observed_at: '1970-01-01T00:00:00.000Z',
    str_ingested_at: '1970-01-01T00:00:00.000000Z',
    f64: 1.7976931348623157e308,
    f64_special: null,
    i8: null,
    i16: null,
    i32: null,
    i64: '9223372036854775807',
    u8: 1,
    u16: 1,
    u32: 1,
    flag: true,
    d: null,
    ts_s: '2026-04-01T06:07:08Z',
    ts_ms: null,
    ts_us: null,
    label: TRICKY,
  },
  {
    note: ' ',
    str_effective_at: '2026-04-01T00:00:00Z',
    str_observed_at: '1970-01-01T00:00:00.001Z',
    str_ingested_at: '1970-01-01T00:00:00.000010Z',
    f64: 1e21,
    f64_special: 0,
    i8: 1,
    i16: 1,
    i32: 1,
    i64: '-9223372036854775808',
    u8: 128,
    u16: 32768,
    u32: 2147483648,
    flag: false,
    d: '1970-01-01',
    ts_s: '1970-01-01T00:00:01Z',
    ts_ms: '2026-04-01T06:07:08.900Z',
    ts_us: '2026-04-01T06:07:08.123456Z',
    label: '"',
  },
  {
    note: '\u0000',
    str_effective_at: '2026-04-01T00:00:00Z',
    str_observed_at: '2026-04-01T06:00:00.120Z',
    str_ingested_at: '2026-04-01T06:00:00.100000Z',
    f64: 123456789.12345679,
    f64_special: -1.5,
    i8: -1,
    i16: -1,
    i32: -1,
    i64: null,
    u8: 7,
    u16: 7,
    u32: 7,
    flag: true,
    d: '2026-04-01',
    ts_s: '1970-01-01T00:00:59Z',
    ts_ms: '1970-01-01T00:01:00.000Z',
    ts_us: '1970-01-01T00:00:01.000000Z',
    label: '\\',
  },
];
const F32 = [0.1, 3.4028234663852886e38, 1.401298464324817e-45, -2.5];

describe('contract 4: rendering of every Arrow type', () => {
  let h: Harness;
  let rows: Array<Record<string, unknown>>;
  let text: string;

  beforeAll(async () => {
    h = await startInProcessHarness({ datasets: [{ productId: 'gbsi_us', dataset: 'system_stress', spec: SPEC }] });
    const r = await h.get('/gbsi_us/system_stress?latest=false');
    text = r.text;
    rows = rowsOf(r);
  });
  afterAll(() => h.close());

  it('each row has every column of the snapshot, in schema order', () => {
    expect(rows.length).toBe(N);
    for (const row of rows) expect(Object.keys(row)).toEqual(SPEC.columns.map((c) => c.name));
    expect(rows.map((r) => r['series'])).toEqual(['r1', 'r2', 'r3', 'r4', 'r5', 'r6']);
  });

  it('Date32 renders "YYYY-MM-DD"', () => {
    expect(rows.map((r) => r['date'])).toEqual(same('2026-04-01'));
    expect(rows.map((r) => r['d'])).toEqual(EXPECTED.map((e) => e['d']));
  });

  it('timestamps render ISO 8601 UTC with Z: s no fraction, ms 3 digits, us 6 digits', () => {
    for (const c of ['str_effective_at', 'str_observed_at', 'str_ingested_at', 'ts_s', 'ts_ms', 'ts_us']) {
      expect(
        rows.map((r) => r[c]),
        c,
      ).toEqual(EXPECTED.map((e) => e[c]));
    }
  });

  it('Float64 values round-trip exactly; NaN and infinities are null', () => {
    rows.forEach((r, i) => expect(Object.is(r['f64'], EXPECTED[i]!['f64']), `row ${i}: ${String(r['f64'])}`).toBe(true));
    expect(rows.map((r) => r['f64_special'])).toEqual(EXPECTED.map((e) => e['f64_special']));
  });

  it('Float32 values round-trip exactly to the stored float32; NaN and infinities are null', () => {
    F32.forEach((v, i) => {
      const got = rows[i]!['f32'];
      expect(typeof got, `row ${i}`).toBe('number');
      expect(Math.fround(got as number), `row ${i}: ${String(got)}`).toBe(Math.fround(v));
    });
    expect(rows[4]!['f32']).toBeNull();
    expect(rows[5]!['f32']).toBeNull();
  });

  it('Int8..Int32 and Uint8..Uint32 render as JSON numbers at their extremes', () => {
    for (const c of ['i8', 'i16', 'i32', 'u8', 'u16', 'u32'])
      expect(
        rows.map((r) => r[c]),
        c,
      ).toEqual(EXPECTED.map((e) => e[c]));
  });

  it('Int64 within 2^53 renders as a number, beyond 2^53 as a string', () => {
    expect(rows.map((r) => r['i64'])).toEqual(EXPECTED.map((e) => e['i64']));
    expect(text).toContain('"i64":9007199254740991');
    expect(text).toContain('"i64":-9007199254740991');
    expect(text).toContain('"i64":"9223372036854775807"');
  });

  it('Bool renders true / false', () => {
    expect(rows.map((r) => r['flag'])).toEqual(EXPECTED.map((e) => e['flag']));
  });

  it('Utf8 and Dictionary<Utf8> are escaped so the exact string comes back', () => {
    expect(rows.map((r) => r['note'])).toEqual(EXPECTED.map((e) => e['note']));
    expect(rows.map((r) => r['label'])).toEqual(EXPECTED.map((e) => e['label']));
    // Raw control characters are never in the JSON text (JSON forbids them in strings).
    // eslint-disable-next-line no-control-regex
    expect(/[\u0000-\u001f]/.test(text)).toBe(false);
  });

  it('Arrow nulls render as null in every nullable type', () => {
    expect(rows[2]).toMatchObject({ note: null, u8: null, u16: null, u32: null, flag: null, ts_s: null, label: null });
    expect(rows[3]).toMatchObject({ i8: null, i16: null, i32: null, d: null, ts_ms: null, ts_us: null });
    expect(rows[5]).toMatchObject({ i64: null });
  });

  it('spec 2.4: the envelope has product_id, count, has_more, data and metadata (no next_cursor on a last page)', async () => {
    const r = await h.get('/gbsi_us/system_stress?latest=false');
    expect(r.headers.get('content-type') ?? '').toMatch(/^application\/json\b/);
    expect(Object.keys(r.body).sort()).toEqual(['count', 'data', 'has_more', 'metadata', 'product_id']);
    expect(r.body.product_id).toBe('gbsi_us');
    expect(r.body.count).toBe(N);
    expect(r.body.has_more).toBe(false);
    expect(r.body.metadata.total_count).toBe(N);
    for (const f of ['retrieved_at', 'total_count', 'record_id', 'data_latest_date', 'data_age_hours']) expect(r.body.metadata).toHaveProperty(f);
  });
});
