import {
  Bool,
  DateDay,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Int8,
  makeData,
  RecordBatch,
  RecordBatchStreamWriter,
  Schema,
  Field,
  Struct,
  TimestampMicrosecond,
  TimestampMillisecond,
  TimestampSecond,
  Uint16,
  Uint32,
  Uint8,
  Utf8,
  type Data,
  type DataType,
} from 'apache-arrow';
import type { Column, StringDictionary } from '../store/column.js';
import type { OutputColumn, PageView } from './page-view.js';

/**
 * A page as an Arrow IPC stream (contract 9): the schema (with `pitcache.series_key` and
 * `pitcache.envelope` metadata), one record batch, the end marker; zero rows is a schema
 * and no batch. Each column is gathered from the store's typed arrays into a typed array of
 * the page's length and handed to apache-arrow as raw buffers (makeData): no per-row JS
 * values, no builders, no detour through JSON. Types stay as stored: Date32, Timestamp at
 * the column's unit with time zone UTC, Float32/Float64, Int8..Int64, Uint8..Uint32, Bool,
 * Utf8; nulls are validity bits and NaN stays NaN.
 */
export function writeArrowPage(page: PageView, metadata: ReadonlyMap<string, string>): Uint8Array {
  const fields: Field[] = [];
  const children: Data[] = [];
  for (const oc of page.columns) {
    const data = gather(oc, page.rows, page.count);
    fields.push(new Field(oc.column.name, data.type, true));
    children.push(data);
  }
  const schema = new Schema(fields, new Map(metadata));
  const writer = new RecordBatchStreamWriter();
  writer.reset(undefined, schema);
  if (page.count > 0) {
    const struct = makeData({ type: new Struct(fields), length: page.count, nullCount: 0, children });
    writer.write(new RecordBatch(schema, struct));
  }
  writer.finish();
  const bytes = writer.toUint8Array(true);
  return page.count > 0 ? bytes : schemaOnly(bytes);
}

/**
 * apache-arrow's stream writer emits an empty record batch when none was written; the
 * contract's zero-row answer is the schema message and the end-of-stream marker only. A
 * message is framed as 0xFFFFFFFF, its metadata length, the metadata (a schema has no body).
 */
function schemaOnly(stream: Uint8Array): Uint8Array {
  const dv = new DataView(stream.buffer, stream.byteOffset, stream.byteLength);
  const end = 8 + dv.getInt32(4, true);
  const out = new Uint8Array(end + 8);
  out.set(stream.subarray(0, end), 0);
  new DataView(out.buffer).setUint32(end, 0xffffffff, true);
  return out;
}

function at(oc: OutputColumn, rows: Int32Array, i: number): number {
  return oc.at === 'row' ? rows[i]! : i;
}

/** Validity bits of the page (null when the column has no nulls), and the null count. */
function validityBits(oc: OutputColumn, rows: Int32Array, n: number): { bits: Uint8Array; nulls: number } {
  const v = oc.column.validity;
  if (v === null) return { bits: new Uint8Array(0), nulls: 0 };
  const bits = new Uint8Array(Math.ceil(n / 8));
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    if (v[at(oc, rows, i)] === 0) nulls++;
    else bits[i >> 3]! |= 1 << (i & 7);
  }
  return { bits, nulls };
}

type NumericArray = Float32Array | Float64Array | Int8Array | Int16Array | Int32Array | Uint8Array | Uint16Array | Uint32Array;

function gatherNumbers<T extends NumericArray>(src: T, oc: OutputColumn, rows: Int32Array, n: number): T {
  const out = new (src.constructor as new (n: number) => T)(n);
  if (oc.at === 'row') for (let i = 0; i < n; i++) out[i] = src[rows[i]!]!;
  else out.set(src.subarray(0, n) as never);
  return out;
}

function numericType(a: NumericArray): DataType {
  if (a instanceof Float32Array) return new Float32();
  if (a instanceof Float64Array) return new Float64();
  if (a instanceof Int8Array) return new Int8();
  if (a instanceof Int16Array) return new Int16();
  if (a instanceof Int32Array) return new Int32();
  if (a instanceof Uint8Array) return new Uint8();
  if (a instanceof Uint16Array) return new Uint16();
  return new Uint32();
}

function gather(oc: OutputColumn, rows: Int32Array, n: number): Data {
  const c: Column = oc.column;
  const { bits, nulls } = validityBits(oc, rows, n);
  const base = { length: n, nullCount: nulls, nullBitmap: bits };
  switch (c.kind) {
    case 'float':
    case 'int': {
      const data = gatherNumbers(c.values, oc, rows, n);
      return makeData({ type: numericType(c.values), data, ...base } as never);
    }
    case 'date32':
      return makeData({ type: new DateDay(), data: gatherNumbers(c.values, oc, rows, n), ...base });
    case 'int64': {
      const data = new BigInt64Array(n);
      for (let i = 0; i < n; i++) data[i] = c.values[at(oc, rows, i)]!;
      return makeData({ type: new Int64(), data, ...base } as never);
    }
    case 'bool': {
      const data = new Uint8Array(Math.ceil(n / 8));
      for (let i = 0; i < n; i++) if (c.values[at(oc, rows, i)] !== 0) data[i >> 3]! |= 1 << (i & 7);
      return makeData({ type: new Bool(), data, ...base });
    }
    case 'timestamp': {
      // Stored as µs in a Float64Array; written as 64-bit integers at the column's unit, two
      // 32-bit words each (no BigInt per value).
      const div = c.unit === 's' ? 1_000_000 : c.unit === 'ms' ? 1000 : 1;
      const words = new Int32Array(2 * n);
      for (let i = 0; i < n; i++) {
        const v = Math.round(c.values[at(oc, rows, i)]! / div) || 0;
        const hi = Math.floor(v / 4294967296);
        words[2 * i] = v - hi * 4294967296;
        words[2 * i + 1] = hi;
      }
      const type = c.unit === 's' ? new TimestampSecond('UTC') : c.unit === 'ms' ? new TimestampMillisecond('UTC') : new TimestampMicrosecond('UTC');
      return makeData({ type, data: words, ...base } as never);
    }
    case 'string': {
      const bytes = utf8Of(c.dict);
      const offsets = new Int32Array(n + 1);
      let total = 0;
      const valid = c.validity;
      for (let i = 0; i < n; i++) {
        const r = at(oc, rows, i);
        if (valid === null || valid[r] !== 0) total += bytes.offsets[c.codes[r]! + 1]! - bytes.offsets[c.codes[r]!]!;
        offsets[i + 1] = total;
      }
      const data = new Uint8Array(total);
      const src = bytes.bytes;
      for (let i = 0; i < n; i++) {
        let p = offsets[i]!;
        const end = offsets[i + 1]!;
        if (end === p) continue;
        // A byte loop, not set(subarray): no view object per cell (strings here are short).
        for (let q = bytes.offsets[c.codes[at(oc, rows, i)]!]!; p < end;) data[p++] = src[q++]!;
      }
      return makeData({ type: new Utf8(), valueOffsets: offsets, data, ...base });
    }
  }
}

/** Every value of a dictionary as UTF-8, once per dictionary. */
const utf8Cache = new WeakMap<StringDictionary, { bytes: Uint8Array; offsets: Int32Array }>();

function utf8Of(dict: StringDictionary): { bytes: Uint8Array; offsets: Int32Array } {
  let u = utf8Cache.get(dict);
  if (u === undefined) {
    const parts = dict.values.map((v) => Buffer.from(v, 'utf8'));
    const offsets = new Int32Array(parts.length + 1);
    for (let i = 0; i < parts.length; i++) offsets[i + 1] = offsets[i]! + parts[i]!.length;
    u = { bytes: Buffer.concat(parts), offsets };
    utf8Cache.set(dict, u);
  }
  return u;
}
