/**
 * The hand-framed Arrow IPC stream (src/format/arrow/ipc-stream.ts), read back by
 * apache-arrow: every column kind the store holds, stored (read at the page's rows) and
 * computed (read at output position), nulls, and the same bytes whether or not the
 * output buffer happens to be 8-byte aligned; the fast paths (strings copied in words, one-value
 * dictionaries, µs timestamps through their double, 64-bit cells as doubles, bitmaps a byte at a
 * time) against their exact forms.
 */
import { tableFromIPC } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { arrowStreamBytes, writeArrowStream } from '../src/format/arrow/ipc-stream.js';
import { ArrowLayout } from '../src/format/arrow/arrow-layout.js';
import type { OutputColumn, PageView } from '../src/format/page-view.js';
import { ByteWriter } from '../src/format/bytes/byte-writer.js';
import type { Column, StringDictionary } from '../src/store/column.js';

function dict(values: string[]): StringDictionary {
  const parts = values.map((v) => Buffer.from(v, 'utf8'));
  const utf8Offsets = new Int32Array(values.length + 1);
  parts.forEach((p, i) => (utf8Offsets[i + 1] = utf8Offsets[i]! + p.length));
  return { values, utf8: Buffer.concat(parts), utf8Offsets, rank: Int32Array.from(values.keys()), codeOf: new Map(values.map((v, i) => [v, i])) };
}

// Four stored rows; the page reads rows 3, 0, 2 in that order.
const stored: Column[] = [
  { kind: 'date32', name: 'date', validity: null, values: Int32Array.of(20000, 20001, 20002, 20003) },
  { kind: 'string', name: 'zone', validity: Uint8Array.of(1, 1, 0, 1), codes: Int32Array.of(0, 1, 0, 2), dict: dict(['DE', 'é"x', 'ümlaut,\n']) },
  { kind: 'float', name: 'f32', validity: null, values: Float32Array.of(0.5, NaN, -1.25, 3) },
  { kind: 'float', name: 'f64', validity: Uint8Array.of(1, 0, 1, 1), values: Float64Array.of(1.5, 0, -0, 1e300) },
  { kind: 'int', name: 'i16', validity: null, values: Int16Array.of(-3, 7, 32767, -32768) },
  { kind: 'int64', name: 'big', validity: null, values: BigInt64Array.of(1n, -(2n ** 62n), 2n ** 53n + 1n, -1n) },
  { kind: 'bool', name: 'flag', validity: Uint8Array.of(1, 1, 1, 0), values: Uint8Array.of(1, 0, 1, 1) },
  { kind: 'timestamp', name: 'ts_ms', unit: 'ms', validity: null, values: Float64Array.of(1_700_000_000_123_000, 0, -1_000, 86_400_000_000) },
];
const computed: Column = {
  kind: 'timestamp',
  name: 'visible_to',
  unit: 'us',
  validity: Uint8Array.of(0, 1, 1),
  values: Float64Array.of(0, 1_775_001_600_000_001, -1),
};
const page: PageView = {
  columns: [...stored.map((column): OutputColumn => ({ column, at: 'row' })), { column: computed, at: 'position' }],
  rows: Int32Array.of(3, 0, 2),
  count: 3,
  seriesKey: ['zone'],
};
const meta = new Map([['pitcache.series_key', '["zone"]']]);

describe('Arrow IPC stream writer', () => {
  it('writes every column kind with its Arrow type, gathered at the page rows or positions', () => {
    const t = tableFromIPC(arrowStreamBytes(page, meta));
    expect(t.schema.metadata.get('pitcache.series_key')).toBe('["zone"]');
    expect(t.schema.fields.map((f) => `${f.name}:${String(f.type)}`)).toEqual([
      'date:Date32<DAY>',
      'zone:Utf8',
      'f32:Float32',
      'f64:Float64',
      'i16:Int16',
      'big:Int64',
      'flag:Bool',
      'ts_ms:Timestamp<MILLISECOND, UTC>',
      'visible_to:Timestamp<MICROSECOND, UTC>',
    ]);
    const col = (name: string): unknown[] => [...t.getChild(name)!];
    expect(col('date')).toEqual([20003, 20000, 20002].map((d) => d * 86_400_000));
    expect(col('zone')).toEqual(['ümlaut,\n', 'DE', null]);
    expect(col('f32')).toEqual([3, 0.5, -1.25]);
    expect(col('f64')).toEqual([1e300, 1.5, -0]);
    expect(col('i16')).toEqual([-32768, -3, 32767]);
    expect(col('big')).toEqual([-1n, 1n, 2n ** 53n + 1n]);
    expect(col('flag')).toEqual([null, true, true]);
    // apache-arrow reads timestamps as ms numbers; the raw int64 words hold the unit's values
    expect(col('ts_ms')).toEqual([86_400_000_000 / 1000, 1_700_000_000_123, -1]);
    const raw = t.getChild('visible_to')!.data[0]!.values as BigInt64Array;
    expect([...raw.subarray(1, 3)]).toEqual([1_775_001_600_000_001n, -1n]);
    expect(t.getChild('visible_to')!.isValid(0)).toBe(false);
    expect(t.getChild('f64')!.nullCount).toBe(0);
    expect(t.getChild('zone')!.nullCount).toBe(1);
  });

  it('NaN stays NaN in a column without nulls', () => {
    const t = tableFromIPC(arrowStreamBytes({ ...page, rows: Int32Array.of(1), count: 1 }, meta));
    expect(Number.isNaN(t.getChild('f32')!.get(0))).toBe(true);
  });

  it('zero rows: the schema message and the end-of-stream marker, no batch', () => {
    const bytes = arrowStreamBytes({ ...page, count: 0 }, meta);
    const t = tableFromIPC(bytes);
    expect(t.numRows).toBe(0);
    // one message (0xFFFFFFFF, length, schema) and the marker: nothing else
    const schemaLength = Buffer.from(bytes).readInt32LE(4);
    expect(bytes.length).toBe(8 + schemaLength + 8);
    expect(t.schema.fields.length).toBe(9);
    expect([...bytes.subarray(bytes.length - 8)]).toEqual([255, 255, 255, 255, 0, 0, 0, 0]);
  });

  it('the same stream whatever the alignment of the output buffer', () => {
    const aligned = arrowStreamBytes(page, meta);
    for (const prefix of [1, 3, 4, 8]) {
      const w = new ByteWriter(64 * 1024);
      for (let i = 0; i < prefix; i++) w.byte(0xab);
      writeArrowStream(w, page, new ArrowLayout(page.columns, [...meta], null));
      expect(Buffer.from(w.view().subarray(prefix)).equals(Buffer.from(aligned)), `prefix ${prefix}`).toBe(true);
    }
  });
});

describe('Arrow IPC stream writer: every integer width, units, computed columns of every kind, buffer sizes', () => {
  const n = 5;
  const rows = Int32Array.of(4, 2, 0, 3, 1);
  const ints: Column[] = [
    { kind: 'int', name: 'i8', validity: null, values: Int8Array.of(-128, -1, 0, 1, 127) },
    { kind: 'int', name: 'i32', validity: null, values: Int32Array.of(-(2 ** 31), -1, 0, 1, 2 ** 31 - 1) },
    { kind: 'int', name: 'u8', validity: null, values: Uint8Array.of(0, 1, 2, 254, 255) },
    { kind: 'int', name: 'u16', validity: null, values: Uint16Array.of(0, 1, 2, 65534, 65535) },
    { kind: 'int', name: 'u32', validity: null, values: Uint32Array.of(0, 1, 2, 2 ** 32 - 2, 2 ** 32 - 1) },
    { kind: 'timestamp', name: 'ts_s', unit: 's', validity: null, values: Float64Array.of(0, 1e6, -2e6, 1_700_000_000e6, 5e6) },
    { kind: 'string', name: 'a', validity: null, codes: Int32Array.of(0, 1, 0, 1, 0), dict: dict(['x', 'long value']) },
    { kind: 'string', name: 'b', validity: null, codes: Int32Array.of(1, 0, 1, 0, 1), dict: dict(['', 'zz']) },
  ];
  // Computed columns (read at output position) of every kind a resolver could hand over.
  const computedKinds: Column[] = [
    { kind: 'int64', name: 'p_i64', validity: null, values: BigInt64Array.of(1n, 2n, -3n, 2n ** 60n, 5n) },
    { kind: 'bool', name: 'p_bool', validity: Uint8Array.of(1, 1, 0, 1, 1), values: Uint8Array.of(1, 0, 1, 0, 1) },
    { kind: 'string', name: 'p_str', validity: Uint8Array.of(1, 0, 1, 1, 1), codes: Int32Array.of(0, 1, 1, 0, 1), dict: dict(['p', 'qq']) },
    { kind: 'float', name: 'p_f64', validity: Uint8Array.of(0, 1, 1, 1, 1), values: Float64Array.of(9, 1.5, 2.5, 3.5, 4.5) },
    { kind: 'date32', name: 'p_date', validity: null, values: Int32Array.of(1, 2, 3, 4, 5) },
  ];
  const view: PageView = {
    columns: [...ints.map((column): OutputColumn => ({ column, at: 'row' })), ...computedKinds.map((column): OutputColumn => ({ column, at: 'position' }))],
    rows,
    count: n,
    seriesKey: [],
  };

  it('keeps each width and unit, and reads computed columns at output position', () => {
    const t = tableFromIPC(arrowStreamBytes(view, new Map()));
    const types = Object.fromEntries(t.schema.fields.map((f) => [f.name, String(f.type)]));
    expect(types).toMatchObject({
      i8: 'Int8',
      i32: 'Int32',
      u8: 'Uint8',
      u16: 'Uint16',
      u32: 'Uint32',
      ts_s: 'Timestamp<SECOND, UTC>',
      p_i64: 'Int64',
      p_bool: 'Bool',
    });
    const col = (name: string): unknown[] => [...t.getChild(name)!];
    const at = (values: ArrayLike<number>): number[] => [...rows].map((r) => values[r]!);
    for (const c of ints.slice(0, 5)) expect(col(c.name), c.name).toEqual(at((c as { values: ArrayLike<number> }).values));
    expect([...(t.getChild('ts_s')!.data[0]!.values as BigInt64Array)]).toEqual([5n, -2n, 0n, 1_700_000_000n, 1n]);
    expect(col('a')).toEqual(['x', 'x', 'x', 'long value', 'long value']);
    expect(col('b')).toEqual(['zz', 'zz', 'zz', '', '']);
    expect(col('p_i64')).toEqual([1n, 2n, -3n, 2n ** 60n, 5n]);
    expect(col('p_bool')).toEqual([true, false, null, false, true]);
    expect(col('p_str')).toEqual(['p', null, 'qq', 'p', 'qq']);
    expect(col('p_f64')).toEqual([null, 1.5, 2.5, 3.5, 4.5]);
    expect(col('p_date')).toEqual([1, 2, 3, 4, 5].map((d) => d * 86_400_000));
  });

  it('buffers are as small as the format allows: no bitmap without nulls, ceil(n/8) bytes of bits, only the bytes of non-null strings', () => {
    const t = tableFromIPC(arrowStreamBytes(view, new Map()));
    const data = (name: string) => t.getChild(name)!.data[0]!;
    expect(data('i8').nullBitmap?.byteLength ?? 0).toBe(0);
    expect(data('p_bool').nullBitmap!.byteLength).toBe(1);
    expect((data('p_bool').values as Uint8Array).byteLength).toBe(1);
    expect((data('p_str').values as Uint8Array).byteLength).toBe('p'.length + 'qq'.length + 'p'.length + 'qq'.length);
    expect((data('a').values as Uint8Array).byteLength).toBe(3 + 2 * 'long value'.length);
    // The whole stream: each message's metadata padded to 8 bytes and no more, every buffer padded to 8.
    const bytes = Buffer.from(arrowStreamBytes(view, new Map()));
    const first = bytes.readInt32LE(4);
    expect(bytes.readInt32LE(0)).toBe(-1);
    expect(first % 8).toBe(0);
    const second = bytes.readInt32LE(8 + first + 4);
    expect(second % 8).toBe(0);
    const bodyStart = 8 + first + 8 + second;
    const body = bytes.length - bodyStart - 8;
    // fixed widths: 5 values each; strings: offsets (6 x 4) + bytes; bitmaps 1 byte; all padded to 8
    const pad = (x: number): number => Math.ceil(x / 8) * 8;
    const fixed = [1, 4, 1, 2, 4, 8].map((w) => pad(w * n)).reduce((a, b) => a + b, 0);
    const strings = pad(24) + pad(3 + 20) + pad(24) + pad(6) + /* p_str */ (pad(1) + pad(24) + pad(6));
    const computed = pad(8 * n) + /* p_bool */ (pad(1) + pad(1)) + /* p_f64 */ (pad(1) + pad(8 * n)) + pad(4 * n);
    expect(body).toBe(fixed + strings + computed);
  });

  it('reads the page only: rows past count are scratch, never counted or copied; computed 1- and 2-byte columns at position; every field nullable', () => {
    const s: Column = { kind: 'string', name: 's', validity: null, codes: Int32Array.of(0, 0, 1), dict: dict(['aa', 'bbb']) };
    const f: Column = { kind: 'float', name: 'f', validity: Uint8Array.of(1, 0, 1), values: Float64Array.of(1, 2, 3) };
    const p8: Column = { kind: 'int', name: 'p8', validity: null, values: Int8Array.of(-5, 6, 7, 8) };
    const p16: Column = { kind: 'int', name: 'p16', validity: null, values: Uint16Array.of(1000, 2000, 3000, 4000) };
    // A resolver's scratch: rows[2] is left over from a longer page, and row 1 is null in f.
    const scratch: PageView = {
      columns: [
        { column: s, at: 'row' },
        { column: f, at: 'row' },
        { column: p8, at: 'position' },
        { column: p16, at: 'position' },
      ],
      rows: Int32Array.of(2, 0, 1),
      count: 2,
      seriesKey: [],
    };
    const t = tableFromIPC(arrowStreamBytes(scratch, new Map()));
    expect(t.numRows).toBe(2);
    expect([...t.getChild('s')!]).toEqual(['bbb', 'aa']);
    expect((t.getChild('s')!.data[0]!.values as Uint8Array).byteLength).toBe(5);
    expect(t.getChild('f')!.nullCount).toBe(0);
    expect([...t.getChild('f')!]).toEqual([3, 1]);
    expect([...t.getChild('p8')!]).toEqual([-5, 6]);
    expect([...t.getChild('p16')!]).toEqual([1000, 2000]);
    expect(t.schema.fields.map((x) => x.nullable)).toEqual([true, true, true, true]);
  });

  it('a page larger than the writer: grows once, same bytes aligned or not', () => {
    const big = 20_000;
    const values = Float64Array.from({ length: big }, (_, i) => i * 0.5);
    const codes = Int32Array.from({ length: big }, (_, i) => i % 3);
    const bigView: PageView = {
      columns: [
        { column: { kind: 'float', name: 'v', validity: null, values }, at: 'row' },
        { column: { kind: 'string', name: 's', validity: null, codes, dict: dict(['a', 'bb', 'ccc']) }, at: 'row' },
      ],
      rows: Int32Array.from({ length: big }, (_, i) => big - 1 - i),
      count: big,
      seriesKey: [],
    };
    const plain = arrowStreamBytes(bigView, new Map());
    const w = new ByteWriter(16);
    w.byte(1);
    writeArrowStream(w, bigView, new ArrowLayout(bigView.columns, [], null));
    expect(Buffer.from(w.view().subarray(1)).equals(Buffer.from(plain))).toBe(true);
    const t = tableFromIPC(plain);
    expect(t.getChild('v')!.get(0)).toBe((big - 1) * 0.5);
    expect(t.getChild('s')!.get(big - 1)).toBe('a');
    expect(t.getChild('s')!.get(0)).toBe(['a', 'bb', 'ccc'][(big - 1) % 3]);
  });
});

describe('Arrow IPC stream writer: Utf8 values of up to 8 bytes (copied as two words)', () => {
  // 0 to 8 bytes, multi-byte UTF-8 included; page rows repeat and skip codes.
  const short = ['', 'a', 'DE', 'é1', 'IT-N', 'SE3xy', '\u{1F600}ab', 'abcdefg', 'ümlaut', '12345678'];
  const rows = Int32Array.from({ length: 257 }, (_, i) => (i * 7) % 40);
  const codes = Int32Array.from({ length: 40 }, (_, i) => (i * 3) % short.length);
  const pageOf = (values: string[]): PageView => ({
    columns: [
      { column: { kind: 'string', name: 's', validity: null, codes, dict: dict(values) }, at: 'row' },
      { column: { kind: 'int', name: 'after', validity: null, values: Int32Array.from({ length: 40 }, (_, i) => -i) }, at: 'row' },
    ],
    rows,
    count: rows.length,
    seriesKey: [],
  });

  it('the same bytes as the byte-by-byte copy (a dictionary with one value over 32 bytes takes that path), zero padding included', () => {
    const fast = Buffer.from(arrowStreamBytes(pageOf(short), new Map()));
    // An extra, unused 33-byte value sends the same page through the byte loop.
    const slow = Buffer.from(arrowStreamBytes(pageOf([...short, 'x'.repeat(33)]), new Map()));
    expect(fast.equals(slow)).toBe(true);
    const t = tableFromIPC(fast);
    expect(t.getChild('s')!.toArray()).toEqual([...rows].map((r) => short[codes[r]!]));
    expect([...t.getChild('after')!.toArray()]).toEqual([...rows].map((r) => 0 - r));
  });

  it('the bytes after the last value are zero up to the next buffer (the word stores past it are undone)', () => {
    const bytes = Buffer.from(arrowStreamBytes(pageOf(short), new Map()));
    const all = Buffer.from([...rows].map((r) => short[codes[r]!]).join(''), 'utf8');
    const at = bytes.indexOf(all);
    expect(at).toBeGreaterThan(0);
    const padded = (all.length + 7) & ~7;
    expect([...bytes.subarray(at + all.length, at + padded)].every((b) => b === 0)).toBe(true);
    // the next buffer (the int column's values) starts right after the padding
    expect(bytes.readInt32LE(at + padded)).toBe(0 - rows[0]!);
  });
});

describe('Arrow IPC stream writer: Utf8 values of 9 to 32 bytes (copied as 3 to 8 words), a one-value dictionary, µs timestamps, 64-bit bits, bitmaps', () => {
  const rng = (seed: number) => () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const next = rng(39);
  const stored = 300;
  const rows = Int32Array.from({ length: 203 }, () => Math.floor(next() * stored));
  const codes = (k: number) => Int32Array.from({ length: stored }, () => Math.floor(next() * k));
  const page = (columns: Column[]): PageView => ({
    columns: columns.map((column): OutputColumn => ({ column, at: 'row' })),
    rows,
    count: rows.length,
    seriesKey: [],
  });
  /** Every byte of a stream written into a writer that held other bytes before: nothing of them may show through. */
  const dirty = (view: PageView): Buffer => {
    const w = new ByteWriter(1 << 20);
    w.buf.fill(0xab);
    writeArrowStream(w, view, new ArrowLayout(view.columns, [], null));
    return Buffer.from(w.view());
  };

  it.each([9, 12, 13, 16, 20, 25, 31, 32])('values of up to %i bytes: the same bytes as the byte loop, over a writer full of other bytes', (longest) => {
    const values = ['', 'a', 'é', '\u{1F600}', 'x'.repeat(longest), 'ü'.repeat(Math.floor(longest / 2)), 'IT-CNOR', 'y'.repeat(longest - 1)];
    const c = codes(values.length);
    const at = (vs: string[]): PageView => page([{ kind: 'string', name: 's', validity: null, codes: c, dict: dict(vs) }]);
    const words = dirty(at(values));
    // An extra, unused 33-byte value sends the same page through the byte loop.
    expect(words.equals(dirty(at([...values, 'z'.repeat(33)])))).toBe(true);
    expect(words.equals(Buffer.from(arrowStreamBytes(at(values), new Map())))).toBe(true);
    expect(tableFromIPC(words).getChild('s')!.toArray()).toEqual([...rows].map((r) => values[c[r]!]));
  });

  it.each(['v1', 'v2.3.1', 'a value of twenty-two', ''])('a dictionary of one value (%j): every cell that value, padding zero', (value) => {
    const view = page([
      { kind: 'string', name: 's', validity: null, codes: new Int32Array(stored), dict: dict([value]) },
      { kind: 'int', name: 'after', validity: null, values: Int32Array.from({ length: stored }, (_, i) => i + 1) },
    ]);
    const bytes = dirty(view);
    expect(bytes.equals(Buffer.from(arrowStreamBytes(view, new Map())))).toBe(true);
    const t = tableFromIPC(bytes);
    expect(t.getChild('s')!.toArray()).toEqual([...rows].map(() => value));
    expect([...t.getChild('after')!.toArray()]).toEqual([...rows].map((r) => r + 1));
  });

  it('µs timestamps: int64 of the same value from 1970 to 2^52 by the words, and exactly before 1970, at and past 2^52, NaN (0) and -0', () => {
    const special = [0, -0, 1, -1, -1_000_000, -(2 ** 40) - 3, 2 ** 32 - 1, 2 ** 32, 2 ** 52 - 1, 2 ** 52, 2 ** 53, -(2 ** 52), 1_775_001_600_000_001, NaN];
    const values = Float64Array.from({ length: stored }, (_, i) => (i < special.length ? special[i]! : Math.floor(next() * 2 ** 51) * (i % 5 === 0 ? -1 : 1)));
    const all = Int32Array.from({ length: stored }, (_, i) => i);
    const view: PageView = { ...page([{ kind: 'timestamp', name: 't', unit: 'us', validity: null, values }]), rows: all, count: stored };
    const t = tableFromIPC(dirty(view));
    const raw = t.getChild('t')!.data[0]!.values as BigInt64Array;
    expect([...raw]).toEqual([...values].map((v) => BigInt(v || 0)));
  });

  it('Float64 and Int64 cells keep their bits: NaN payloads, signalling NaNs, -0, the int64 extremes', () => {
    const f = new Float64Array(stored);
    const fw = new Int32Array(f.buffer);
    for (let i = 0; i < stored; i++) {
      fw[2 * i] = Math.floor(next() * 2 ** 32) | 0;
      fw[2 * i + 1] = i % 3 === 0 ? 0x7ff00000 | (i & 0xfffff) : i % 3 === 1 ? 0xfff80000 | (i & 0x7ffff) : Math.floor(next() * 2 ** 32) | 0;
    }
    const big = BigInt64Array.from({ length: stored }, (_, i) => (i % 2 === 0 ? -(2n ** 63n) + BigInt(i) : 2n ** 63n - 1n - BigInt(i)));
    const view = page([
      { kind: 'float', name: 'f', validity: null, values: f },
      { kind: 'int64', name: 'i', validity: null, values: big },
    ]);
    const t = tableFromIPC(dirty(view));
    const out = t.getChild('f')!.data[0]!.values as Float64Array;
    const words = new Int32Array(out.buffer, out.byteOffset, 2 * rows.length);
    expect([...words]).toEqual([...rows].flatMap((r) => [fw[2 * r]!, fw[2 * r + 1]!]));
    expect([...(t.getChild('i')!.data[0]!.values as BigInt64Array)]).toEqual([...rows].map((r) => big[r]!));
  });

  it('bitmaps of a count that is not a multiple of 8: each bit at its row, the null count and the values exact', () => {
    const validity = Uint8Array.from({ length: stored }, () => (next() < 0.3 ? 0 : 1));
    const flags = Uint8Array.from({ length: stored }, () => (next() < 0.5 ? 0 : Math.ceil(next() * 255)));
    for (const count of [1, 7, 8, 9, 203]) {
      const view: PageView = { ...page([{ kind: 'bool', name: 'b', validity, values: flags }]), count };
      const t = tableFromIPC(dirty(view));
      const b = t.getChild('b')!;
      const expected = [...rows.subarray(0, count)].map((r) => (validity[r] === 0 ? null : flags[r] !== 0));
      expect([...b]).toEqual(expected);
      expect(b.nullCount).toBe(expected.filter((v) => v === null).length);
    }
  });
});
