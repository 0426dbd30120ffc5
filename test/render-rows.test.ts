import { describe, expect, it } from 'vitest';
import type { Column } from '../src/store/column.js';
import { buildStringDictionary } from '../src/store/string-dictionary.js';
import { ByteWriter } from '../src/format/bytes/byte-writer.js';
import { RowRenderer } from '../src/format/json/row-renderer.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function render(columns: Column[], rows: number[], out = new ByteWriter(16)): { text: string; parsed: unknown } {
  const renderer = new RowRenderer({ columns });
  out.reset();
  renderer.writeRows(out, Int32Array.from(rows), rows.length);
  const text = strictUtf8.decode(out.view());
  return { text, parsed: JSON.parse(text) };
}

function validity(bits: number[]): Uint8Array {
  return Uint8Array.from(bits);
}

const DAY_MS = 86_400_000;
const d2024_02_29 = Date.UTC(2024, 1, 29) / DAY_MS;
const names = ['DE', 'FR', 'ü\n"x"', '😀'];
const dict = buildStringDictionary(names);

// Four rows; every kind, nullable and not. Expected values are written out by hand below.
const columns: Column[] = [
  { kind: 'date32', name: 'date', validity: null, values: Int32Array.from([d2024_02_29, -1, 0, 20000]) },
  { kind: 'timestamp', name: 'ts_s', unit: 's', validity: null, values: Float64Array.from([0, -1, 1_500_000, 86_400_000_000]) },
  { kind: 'timestamp', name: 'ts_ms', unit: 'ms', validity: validity([1, 1, 0, 1]), values: Float64Array.from([1_234_000, -1_000, 0, 5_000]) },
  { kind: 'timestamp', name: 'ts_us', unit: 'us', validity: null, values: Float64Array.from([1, -1, 999_999, 1_000_001]) },
  { kind: 'string', name: 'country', validity: null, codes: Int32Array.from([0, 1, 2, 3]), dict },
  { kind: 'string', name: 'maybe', validity: validity([0, 1, 1, 1]), codes: Int32Array.from([0, 3, 3, 1]), dict },
  { kind: 'float', name: 'f64', validity: validity([1, 1, 1, 0]), values: Float64Array.from([0.1, NaN, -Infinity, 7]) },
  { kind: 'float', name: 'f32', validity: null, values: Float32Array.from([0.1, -2.5, Infinity, 3.4e38]) },
  { kind: 'int', name: 'i8', validity: null, values: Int8Array.from([-128, 127, 0, -1]) },
  { kind: 'int', name: 'i16', validity: null, values: Int16Array.from([-32768, 32767, 0, 1]) },
  { kind: 'int', name: 'i32', validity: validity([1, 0, 1, 1]), values: Int32Array.from([-(2 ** 31), 5, 2 ** 31 - 1, 0]) },
  { kind: 'int', name: 'u8', validity: null, values: Uint8Array.from([0, 255, 1, 2]) },
  { kind: 'int', name: 'u16', validity: null, values: Uint16Array.from([0, 65535, 1, 2]) },
  { kind: 'int', name: 'u32', validity: null, values: Uint32Array.from([0, 2 ** 32 - 1, 2 ** 31, 2]) },
  { kind: 'int64', name: 'i64', validity: validity([1, 1, 1, 0]), values: BigInt64Array.from([2n ** 53n, 2n ** 53n + 1n, -(2n ** 63n), 0n]) },
  { kind: 'bool', name: 'flag', validity: validity([1, 1, 0, 1]), values: Uint8Array.from([1, 0, 1, 0]) },
  { kind: 'string', name: 'model_version', validity: null, codes: Int32Array.from([0, 0, 0, 0]), dict: buildStringDictionary(['1.0']) },
];

const expectedRows = [
  {
    date: '2024-02-29',
    ts_s: '1970-01-01T00:00:00Z',
    ts_ms: '1970-01-01T00:00:01.234Z',
    ts_us: '1970-01-01T00:00:00.000001Z',
    country: 'DE',
    maybe: null,
    f64: 0.1,
    f32: Math.fround(0.1),
    i8: -128,
    i16: -32768,
    i32: -(2 ** 31),
    u8: 0,
    u16: 0,
    u32: 0,
    i64: 2 ** 53,
    flag: true,
    model_version: '1.0',
  },
  {
    date: '1969-12-31',
    ts_s: '1969-12-31T23:59:59Z',
    ts_ms: '1969-12-31T23:59:59.999Z',
    ts_us: '1969-12-31T23:59:59.999999Z',
    country: 'FR',
    maybe: '😀',
    f64: null,
    f32: -2.5,
    i8: 127,
    i16: 32767,
    i32: null,
    u8: 255,
    u16: 65535,
    u32: 2 ** 32 - 1,
    i64: '9007199254740993',
    flag: false,
    model_version: '1.0',
  },
  {
    date: '1970-01-01',
    ts_s: '1970-01-01T00:00:01Z',
    ts_ms: null,
    ts_us: '1970-01-01T00:00:00.999999Z',
    country: 'ü\n"x"',
    maybe: '😀',
    f64: null,
    f32: null,
    i8: 0,
    i16: 0,
    i32: 2 ** 31 - 1,
    u8: 1,
    u16: 1,
    u32: 2 ** 31,
    i64: '-9223372036854775808',
    flag: null,
    model_version: '1.0',
  },
  {
    date: '2024-10-04',
    ts_s: '1970-01-02T00:00:00Z',
    ts_ms: '1970-01-01T00:00:00.005Z',
    ts_us: '1970-01-01T00:00:01.000001Z',
    country: '😀',
    maybe: 'FR',
    f64: null,
    f32: Math.fround(3.4e38),
    i8: -1,
    i16: 1,
    i32: 0,
    u8: 2,
    u16: 2,
    u32: 2,
    i64: null,
    flag: false,
    model_version: '1.0',
  },
];

describe('RowRenderer', () => {
  it('renders every column kind to the expected JSON values', () => {
    expect(render(columns, [0, 1, 2, 3]).parsed).toEqual(expectedRows);
  });

  it('keeps every column, in schema order, in each row', () => {
    const parsed = render(columns, [2]).parsed as Record<string, unknown>[];
    expect(Object.keys(parsed[0]!)).toEqual(columns.map((c) => c.name));
  });

  it('writes the given row ids in the given order, repeats included', () => {
    const parsed = render(columns, [3, 0, 3, 1]).parsed;
    expect(parsed).toEqual([expectedRows[3], expectedRows[0], expectedRows[3], expectedRows[1]]);
  });

  it('writes only the first count rows', () => {
    const renderer = new RowRenderer({ columns });
    const out = new ByteWriter();
    renderer.writeRows(out, Int32Array.from([1, 2, 3]), 1);
    expect(JSON.parse(Buffer.from(out.view()).toString('utf8'))).toEqual([expectedRows[1]]);
  });

  it('writes [] for no rows and {} for a table without columns', () => {
    expect(render(columns, []).text).toBe('[]');
    expect(render([], [0, 0]).text).toBe('[{},{}]');
  });

  it('escapes column names in keys', () => {
    const odd: Column[] = [{ kind: 'bool', name: 'we"ird\\', validity: null, values: Uint8Array.from([1]) }];
    expect(render(odd, [0]).text).toBe('[{"we\\"ird\\\\":true}]');
  });

  it('grows the buffer across many rows and long strings without corrupting output', () => {
    const long = 'x'.repeat(5000);
    const big: Column[] = [
      { kind: 'string', name: 's', validity: null, codes: Int32Array.from([0, 1]), dict: buildStringDictionary([long, 'y']) },
      ...columns.slice(0, 4).map((c) => ({ ...c })),
    ];
    const rows = Array.from({ length: 3000 }, (_, i) => i % 2);
    const parsed = render(big, rows, new ByteWriter(16)).parsed as Record<string, unknown>[];
    expect(parsed.length).toBe(3000);
    expect(parsed[0]!.s).toBe(long);
    expect(parsed[2999]!.s).toBe('y');
    expect(parsed[2999]!.ts_us).toBe('1969-12-31T23:59:59.999999Z');
  });

  it('appends after what the writer already holds', () => {
    const out = new ByteWriter();
    out.ascii('{"data":');
    new RowRenderer({ columns: columns.slice(0, 1) }).writeRows(out, Int32Array.from([0]), 1);
    out.ascii('}');
    expect(Buffer.from(out.view()).toString()).toBe('{"data":[{"date":"2024-02-29"}]}');
  });
});

describe('RowRenderer caches (a cache must never change what is written)', () => {
  it('renders Float32 cells the same as their widened doubles, through slot collisions and revisits', () => {
    // 20,000 distinct float32 values (many share a slot of the 2,048-slot text cache), then
    // the same values again in another order, with NaN payloads, ±0 and infinities mixed in.
    const specials = [NaN, -0, 0, Infinity, -Infinity, 3.4028234663852886e38, 1.401298464324817e-45];
    const raw = new Float32Array(20_000 + specials.length);
    for (let i = 0; i < 20_000; i++) raw[i] = (i - 10_000) * 0.01 + i * 1e-7;
    raw.set(specials, 20_000);
    const bits = new Uint32Array(raw.buffer);
    bits[20_001] = 0x7fc00001; // another NaN bit pattern
    const column: Column = { kind: 'float', name: 'v', validity: null, values: raw };
    const order = [...Array.from({ length: raw.length }, (_, i) => i), ...Array.from({ length: raw.length }, (_, i) => raw.length - 1 - i)];
    const parsed = render([column], order).parsed as { v: number | null }[];
    parsed.forEach((row, i) => {
      const x = raw[order[i]!]!;
      expect(row.v).toBe(Number.isFinite(x) ? (x === 0 ? 0 : x) : null);
    });
  });

  it('writes the same text for days that share a day-cache slot, alternating', () => {
    const days = [19000, 19000 + 4096, 19000 - 4096, 19000, 19000 + 4096 * 7, -719528, 2932896];
    const expected = days.map((d) =>
      new Date(d * 86_400_000)
        .toISOString()
        .slice(0, 10)
        .replace(/^\+0*(\d{4,})/, '$1'),
    );
    const date: Column = { kind: 'date32', name: 'd', validity: null, values: Int32Array.from(days) };
    const ts: Column = { kind: 'timestamp', name: 't', unit: 's', validity: null, values: Float64Array.from(days, (d) => d * 86_400_000_000 + 3_723_000_000) };
    const parsed = render([date, ts], [0, 1, 2, 3, 4, 5, 6, 0, 4]).parsed as { d: string; t: string }[];
    const want = [0, 1, 2, 3, 4, 5, 6, 0, 4].map((i) => expected[i]!);
    expect(parsed.map((r) => r.d)).toEqual(want);
    expect(parsed.map((r) => r.t)).toEqual(want.map((d) => `${d}T01:02:03Z`));
  });

  it('keeps keys byte-exact whatever their length (word stores plus a tail)', () => {
    for (let len = 0; len <= 9; len++) {
      const name = 'ké"'.repeat(len).slice(0, len);
      const col: Column = { kind: 'int', name, validity: null, values: Int32Array.from([len]) };
      const flag: Column = { kind: 'bool', name: `${name}!`, validity: null, values: Uint8Array.from([0]) };
      expect(render([col, flag], [0]).text).toBe(`[{${JSON.stringify(name)}:${len},${JSON.stringify(`${name}!`)}:false}]`);
    }
  });

  it('renders tables whose column names look like code as plain keys', () => {
    const evil: Column[] = [{ kind: 'int', name: "'); throw new Error('x'); ('`${b}", validity: null, values: Int32Array.from([1]) }];
    expect(render(evil, [0]).parsed).toEqual([{ "'); throw new Error('x'); ('`${b}": 1 }]);
  });
});
