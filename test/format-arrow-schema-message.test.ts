/**
 * The Arrow schema message pitcache writes itself (src/format/arrow/schema-message.ts), read
 * as documentation of what it generates:
 *
 *   0xFFFFFFFF | metadata length | flatbuffer: Message{V5, Schema{little-endian, fields,
 *   custom_metadata: [...fixed entries, {key: last key, value: <written per answer>}]}} | 0-padding to 8
 *
 * Everything before the last value's string is the same bytes for every answer of a layout;
 * the value (pitcache's envelope) is the buffer's last object, so its length is free. Read
 * back by apache-arrow and by polars (Rust, whose flatbuffer reader verifies every offset),
 * and decoded to the same schema as apache-arrow's own encoder gives.
 */
import {
  Bool,
  DateDay,
  Field,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Int8,
  Message,
  Schema,
  tableFromIPC,
  TimestampMicrosecond,
  TimestampMillisecond,
  TimestampSecond,
  Uint16,
  Uint32,
  Uint8,
  Utf8,
} from 'apache-arrow';
import pl from 'nodejs-polars';
import { describe, expect, it } from 'vitest';
import { writeArrowStream } from '../src/format/arrow/ipc-stream.js';
import { ArrowLayout } from '../src/format/arrow/arrow-layout.js';
import { SchemaMessage } from '../src/format/arrow/schema-message.js';
import type { OutputColumn, PageView } from '../src/format/page-view.js';
import { ByteWriter } from '../src/format/bytes/byte-writer.js';
import type { Column } from '../src/store/column.js';

const utf8 = (values: string[]): Column => {
  const parts = values.map((v) => Buffer.from(v, 'utf8'));
  const utf8Offsets = new Int32Array(values.length + 1);
  parts.forEach((p, i) => (utf8Offsets[i + 1] = utf8Offsets[i]! + p.length));
  const dict = { values, utf8: Buffer.concat(parts), utf8Offsets, rank: Int32Array.from(values.keys()), codeOf: new Map(values.map((v, i) => [v, i])) };
  return { kind: 'string', name: 'zone', validity: null, codes: Int32Array.of(0, 1), dict };
};

/** One column of every kind and width the store holds. */
const columns: OutputColumn[] = (
  [
    { kind: 'date32', name: 'date', validity: null, values: Int32Array.of(20000, 20001) },
    utf8(['DE', 'FR']),
    { kind: 'float', name: 'f32', validity: null, values: Float32Array.of(1, 2) },
    { kind: 'float', name: 'f64', validity: null, values: Float64Array.of(1, 2) },
    { kind: 'int', name: 'i8', validity: null, values: Int8Array.of(1, 2) },
    { kind: 'int', name: 'i16', validity: null, values: Int16Array.of(1, 2) },
    { kind: 'int', name: 'i32', validity: null, values: Int32Array.of(1, 2) },
    { kind: 'int', name: 'u8', validity: null, values: Uint8Array.of(1, 2) },
    { kind: 'int', name: 'u16', validity: null, values: Uint16Array.of(1, 2) },
    { kind: 'int', name: 'u32', validity: null, values: Uint32Array.of(1, 2) },
    { kind: 'int64', name: 'i64', validity: null, values: BigInt64Array.of(1n, 2n) },
    { kind: 'bool', name: 'flag', validity: null, values: Uint8Array.of(1, 0) },
    { kind: 'timestamp', name: 'ts_s', unit: 's', validity: null, values: Float64Array.of(0, 1e6) },
    { kind: 'timestamp', name: 'ts_ms', unit: 'ms', validity: null, values: Float64Array.of(0, 1e3) },
    { kind: 'timestamp', name: 'ts_us', unit: 'us', validity: null, values: Float64Array.of(0, 1) },
  ] as Column[]
).map((column) => ({ column, at: 'row' as const }));
const view: PageView = { columns, rows: Int32Array.of(0, 1), count: 2, seriesKey: ['zone'] };
const FIXED = [['pitcache.series_key', '["zone"]']] as const;

function message(m: SchemaMessage, last: string | null): Buffer {
  const w = new ByteWriter(256);
  m.write(w, last === null ? null : (o) => o.bytes(Buffer.from(last, 'utf8')));
  return Buffer.from(w.view());
}

/** A whole stream of `view` whose envelope is `last`. */
function stream(last: string): Uint8Array {
  const w = new ByteWriter(4096);
  writeArrowStream(w, view, new ArrowLayout(columns, FIXED, 'pitcache.envelope'), (o) => o.bytes(Buffer.from(last, 'utf8')));
  return w.view();
}

// Lengths around every padding remainder, and multi-byte UTF-8.
const VALUES = ['', 'a', 'ab', 'abc', 'abcd', 'abcde', 'ünï', '{"count":12,"x":"\u2603"}', 'x'.repeat(1000)];

describe('SchemaMessage', () => {
  it('frames one IPC message: continuation, the length of the padded flatbuffer, a multiple of 8 in all', () => {
    const m = new SchemaMessage(columns, FIXED, 'pitcache.envelope');
    for (const v of VALUES) {
      const bytes = message(m, v);
      expect(bytes.readInt32LE(0)).toBe(-1);
      expect(bytes.length % 8).toBe(0);
      expect(bytes.readInt32LE(4)).toBe(bytes.length - 8);
    }
  });

  it('the bytes before the last value are the same for every answer; the value is the last thing in the buffer', () => {
    const m = new SchemaMessage(columns, FIXED, 'pitcache.envelope');
    const [a, b] = [message(m, 'short'), message(m, 'a much longer envelope than the first one')];
    // The flatbuffer starts at 8; the value's length word is right after the shared prefix.
    const lengthWordOf = (bytes: Buffer, value: string): number => bytes.lastIndexOf(Buffer.from(value)) - 4;
    const at = lengthWordOf(a, 'short');
    expect(lengthWordOf(b, 'a much longer envelope than the first one')).toBe(at);
    expect(a.subarray(8, at).equals(b.subarray(8, at))).toBe(true);
    expect(a.readUint32LE(at)).toBe(5);
    // after the value: its NUL and zero padding only
    expect([...a.subarray(at + 4 + 5)].every((x) => x === 0)).toBe(true);
  });

  it('decodes to the schema apache-arrow encodes itself: names, types, nullability, metadata in order', () => {
    const expected = (envelope: string): Schema =>
      new Schema(
        [
          new Field('date', new DateDay(), true),
          new Field('zone', new Utf8(), true),
          new Field('f32', new Float32(), true),
          new Field('f64', new Float64(), true),
          new Field('i8', new Int8(), true),
          new Field('i16', new Int16(), true),
          new Field('i32', new Int32(), true),
          new Field('u8', new Uint8(), true),
          new Field('u16', new Uint16(), true),
          new Field('u32', new Uint32(), true),
          new Field('i64', new Int64(), true),
          new Field('flag', new Bool(), true),
          new Field('ts_s', new TimestampSecond('UTC'), true),
          new Field('ts_ms', new TimestampMillisecond('UTC'), true),
          new Field('ts_us', new TimestampMicrosecond('UTC'), true),
        ],
        new Map([...FIXED, ['pitcache.envelope', envelope]]),
      );
    const summary = (s: Schema): unknown => ({
      fields: s.fields.map((f: Field) => `${f.name}:${String(f.type)}:${f.nullable}`),
      metadata: [...s.metadata],
    });
    const ours = new SchemaMessage(columns, FIXED, 'pitcache.envelope');
    for (const v of VALUES) {
      const theirs = Message.decode(Message.encode(Message.from(expected(v)))).header() as Schema;
      const decoded = Message.decode(message(ours, v).subarray(8)).header() as Schema;
      expect(summary(decoded)).toEqual(summary(theirs));
      expect(summary(tableFromIPC(stream(v)).schema)).toEqual(summary(theirs));
    }
  });

  it('polars (a verifying flatbuffer reader) reads the stream at every value length, with the types', () => {
    for (const v of VALUES) {
      const df = pl.readIPCStream(Buffer.from(stream(v)));
      expect(df.height).toBe(2);
      expect(df.columns).toEqual(columns.map((c) => c.column.name));
      expect(String(df.getColumn('ts_ms').dtype)).toContain('Datetime');
      expect(String(df.getColumn('u16').dtype)).toContain('UInt16');
      expect(df.getColumn('zone').toArray()).toEqual(['DE', 'FR']);
    }
  });

  it('without a last key: exactly the fixed entries (the file channel), and none at all', () => {
    const fixedOnly = Message.decode(message(new SchemaMessage(columns, FIXED, null), null).subarray(8)).header() as Schema;
    expect([...fixedOnly.metadata]).toEqual([...FIXED]);
    const none = Message.decode(message(new SchemaMessage(columns.slice(0, 1), [], null), null).subarray(8)).header() as Schema;
    expect(none.metadata.size).toBe(0);
    expect(none.fields.map((f) => f.name)).toEqual(['date']);
  });
});
