import { Message } from 'apache-arrow';
import { BufferRegion, FieldNode, RecordBatch as RecordBatchHeader } from 'apache-arrow/ipc/metadata/message';
import { ByteWriter } from '../../render/byte-writer.js';
import type { StringColumn } from '../../store/column.js';
import type { OutputColumn, PageView } from '../page-view.js';
import { SchemaMessage } from './schema-message.js';

/**
 * A page as an Arrow IPC stream (contract 9), framed here and written straight into the
 * answer's ByteWriter: the schema message, one record batch, the end-of-stream marker;
 * zero rows is the schema and the marker only.
 *
 * The schema message is the layout's SchemaMessage (encoded once per layout, the envelope
 * written per answer); the record-batch header comes from apache-arrow (Message.encode);
 * the body, which is all of the bytes, is gathered from the
 * store's typed arrays directly into the output at its final offset: one pass per column,
 * no intermediate arrays, no per-row JS values, no copy of the finished body. Layout per
 * the Arrow columnar format: every buffer 8-byte aligned and padded, validity bitmaps only
 * for columns that have nulls, Utf8 as int32 offsets + bytes, Timestamp as int64 at the
 * column's unit with time zone UTC, Bool bit-packed.
 */
export function writeArrowStream(out: ByteWriter, page: PageView, schema: SchemaMessage, writeLast: ((out: ByteWriter) => void) | null = null): void {
  // A schema message is a whole number of 8-byte words: the batch part keeps the stream's alignment.
  schema.write(out, writeLast);
  writeArrowBatch(out, page);
}

/** The rest of the stream after the schema: the record batch (none for zero rows) and the end-of-stream marker. */
export function writeArrowBatch(out: ByteWriter, page: PageView): void {
  // Typed-array views need 8-byte alignment in the output's memory; a misaligned writer
  // (never the serving threads', whose buffers are their own ArrayBuffers) goes through one.
  if (((out.buf.byteOffset + out.pos) & 7) !== 0) {
    const aligned = new ByteWriter(64 * 1024);
    writeAligned(aligned, page);
    out.bytes(aligned.view());
    return;
  }
  writeAligned(out, page);
}

/** The whole stream as owned bytes, with a schema encoded for this one answer (the file channel). */
export function arrowStreamBytes(page: PageView, metadata: ReadonlyMap<string, string>): Uint8Array {
  const w = new ByteWriter(64 * 1024);
  writeArrowStream(w, page, new SchemaMessage(page.columns, [...metadata], null));
  return Buffer.from(w.view());
}

const pad8 = (n: number): number => (n + 7) & ~7;

function writeAligned(out: ByteWriter, page: PageView): void {
  const { columns, rows, count: n } = page;
  if (n > 0) {
    // Plan: every column's buffers (offset, length in the body) and null count.
    const nodes: FieldNode[] = [];
    const regions: BufferRegion[] = [];
    const stringBytes: number[] = [];
    let body = 0;
    const region = (length: number): void => {
      regions.push(new BufferRegion(body, length));
      body += pad8(length);
    };
    for (const oc of columns) {
      const c = oc.column;
      const nulls = c.validity === null ? 0 : countNulls(c.validity, oc, rows, n);
      nodes.push(new FieldNode(n, nulls));
      region(c.validity === null ? 0 : Math.ceil(n / 8));
      switch (c.kind) {
        case 'float':
        case 'int':
          region(n * c.values.BYTES_PER_ELEMENT);
          break;
        case 'date32':
          region(n * 4);
          break;
        case 'int64':
        case 'timestamp':
          region(n * 8);
          break;
        case 'bool':
          region(Math.ceil(n / 8));
          break;
        case 'string': {
          const total = stringTotal(c.codes, c.validity, c.dict.utf8Offsets, oc, rows, n);
          stringBytes.push(total);
          region((n + 1) * 4);
          region(total);
          break;
        }
      }
    }
    writeMessage(out, Message.encode(Message.from(new RecordBatchHeader(n, nodes, regions, null), body)), body);
    const start = out.pos;
    const buf = out.buf;
    buf.fill(0, start, start + body); // padding and bitmaps start from zero
    const base = buf.byteOffset + start;
    let b = 0;
    let s = 0;
    for (const oc of columns) {
      const c = oc.column;
      const validity = regions[b++]!;
      if (c.validity !== null) writeBits(new Uint8Array(buf.buffer, base + validity.offset, validity.length), c.validity, oc, rows, n);
      const data = regions[b++]!;
      const at = base + data.offset;
      switch (c.kind) {
        case 'float':
        case 'int':
          gatherWidth(buf.buffer, at, c.values, oc, rows, n);
          break;
        case 'date32':
          gather4(new Int32Array(buf.buffer, at, n), c.values, oc, rows, n);
          break;
        case 'int64': {
          const src = new Int32Array(c.values.buffer, c.values.byteOffset, c.values.length * 2);
          gatherPairs(new Int32Array(buf.buffer, at, 2 * n), src, oc, rows, n);
          break;
        }
        case 'timestamp':
          writeTimestamps(new Int32Array(buf.buffer, at, 2 * n), c.values, c.unit === 's' ? 1_000_000 : c.unit === 'ms' ? 1000 : 1, oc, rows, n);
          break;
        case 'bool':
          writeBits(new Uint8Array(buf.buffer, at, data.length), c.values, oc, rows, n);
          break;
        case 'string': {
          const bytes = regions[b++]!;
          writeStrings(new Int32Array(buf.buffer, at, n + 1), new Uint8Array(buf.buffer, base + bytes.offset, stringBytes[s++]!), c, oc, rows, n);
          break;
        }
      }
    }
    out.pos = start + body;
  }
  out.ensure(8);
  out.buf.writeInt32LE(-1, out.pos);
  out.buf.writeInt32LE(0, out.pos + 4);
  out.pos += 8;
}

/** 0xFFFFFFFF, the metadata length (padded so the body starts 8-aligned), the metadata; room for the body after it. */
function writeMessage(out: ByteWriter, meta: Uint8Array, bodyLength: number): void {
  const padded = pad8(meta.byteLength + 8) - 8;
  out.ensure(8 + padded + bodyLength + 8);
  const buf = out.buf;
  buf.writeInt32LE(-1, out.pos);
  buf.writeInt32LE(padded, out.pos + 4);
  buf.set(meta, out.pos + 8);
  buf.fill(0, out.pos + 8 + meta.byteLength, out.pos + 8 + padded);
  out.pos += 8 + padded;
}

type Numbers = Float32Array | Float64Array | Int8Array | Int16Array | Int32Array | Uint8Array | Uint16Array | Uint32Array;

/**
 * dst = src gathered by row, copied as raw words of the value's width: one monomorphic loop
 * per width instead of one loop over eight array types (which V8 compiles megamorphic, at
 * several times the cost per value). Bits are copied unchanged, NaN payloads included.
 */
function gatherWidth(out: ArrayBufferLike, at: number, values: Numbers, oc: OutputColumn, rows: Int32Array, n: number): void {
  const { buffer, byteOffset, length } = values;
  switch (values.BYTES_PER_ELEMENT) {
    case 8:
      gatherPairs(new Int32Array(out, at, 2 * n), new Int32Array(buffer, byteOffset, 2 * length), oc, rows, n);
      return;
    case 4:
      gather4(new Int32Array(out, at, n), new Int32Array(buffer, byteOffset, length), oc, rows, n);
      return;
    case 2:
      gather2(new Int16Array(out, at, n), new Int16Array(buffer, byteOffset, length), oc, rows, n);
      return;
    default:
      gather1(new Uint8Array(out, at, n), new Uint8Array(buffer, byteOffset, length), oc, rows, n);
  }
}

/** dst[i] = src[row i] (stored column) or src[i] (computed column). */
function gather4(dst: Int32Array, src: Int32Array, oc: OutputColumn, rows: Int32Array, n: number): void {
  if (oc.at === 'position') dst.set(src.subarray(0, n));
  else for (let i = 0; i < n; i++) dst[i] = src[rows[i]!]!;
}

function gather2(dst: Int16Array, src: Int16Array, oc: OutputColumn, rows: Int32Array, n: number): void {
  if (oc.at === 'position') dst.set(src.subarray(0, n));
  else for (let i = 0; i < n; i++) dst[i] = src[rows[i]!]!;
}

function gather1(dst: Uint8Array, src: Uint8Array, oc: OutputColumn, rows: Int32Array, n: number): void {
  if (oc.at === 'position') dst.set(src.subarray(0, n));
  else for (let i = 0; i < n; i++) dst[i] = src[rows[i]!]!;
}

/** 64-bit values as pairs of 32-bit words: no BigInt per value, bits unchanged. */
function gatherPairs(dst: Int32Array, src: Int32Array, oc: OutputColumn, rows: Int32Array, n: number): void {
  if (oc.at === 'position') {
    dst.set(src.subarray(0, 2 * n));
    return;
  }
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    dst[2 * i] = src[2 * r]!;
    dst[2 * i + 1] = src[2 * r + 1]!;
  }
}

/** µs (Float64) -> int64 at the column's unit, little-endian words. */
function writeTimestamps(dst: Int32Array, src: Float64Array, div: number, oc: OutputColumn, rows: Int32Array, n: number): void {
  const byRow = oc.at === 'row';
  for (let i = 0; i < n; i++) {
    const v = Math.round(src[byRow ? rows[i]! : i]! / div) || 0;
    const hi = Math.floor(v / 4294967296);
    dst[2 * i] = v - hi * 4294967296;
    dst[2 * i + 1] = hi;
  }
}

/** Bit i set when src at row i is non-zero (a validity bitmap, or a Bool column's values); dst starts zeroed. */
function writeBits(dst: Uint8Array, src: Uint8Array, oc: OutputColumn, rows: Int32Array, n: number): void {
  const byRow = oc.at === 'row';
  for (let i = 0; i < n; i++) if (src[byRow ? rows[i]! : i] !== 0) dst[i >> 3] = dst[i >> 3]! | (1 << (i & 7));
}

function countNulls(validity: Uint8Array, oc: OutputColumn, rows: Int32Array, n: number): number {
  const byRow = oc.at === 'row';
  let nulls = 0;
  for (let i = 0; i < n; i++) if (validity[byRow ? rows[i]! : i] === 0) nulls++;
  return nulls;
}

function stringTotal(codes: Int32Array, validity: Uint8Array | null, offsets: Int32Array, oc: OutputColumn, rows: Int32Array, n: number): number {
  const byRow = oc.at === 'row';
  let total = 0;
  for (let i = 0; i < n; i++) {
    const r = byRow ? rows[i]! : i;
    if (validity !== null && validity[r] === 0) continue;
    const code = codes[r]!;
    total += offsets[code + 1]! - offsets[code]!;
  }
  return total;
}

/** Utf8 offsets and bytes, each value copied from its dictionary's UTF-8 (store/column.ts). */
function writeStrings(offsets: Int32Array, bytes: Uint8Array, c: StringColumn, oc: OutputColumn, rows: Int32Array, n: number): void {
  const byRow = oc.at === 'row';
  const { codes, validity } = c;
  const src = c.dict.utf8;
  const from = c.dict.utf8Offsets;
  let p = 0;
  offsets[0] = 0;
  for (let i = 0; i < n; i++) {
    const r = byRow ? rows[i]! : i;
    if (validity === null || validity[r] !== 0) {
      const code = codes[r]!;
      // A byte loop, not set(subarray): no view object per cell (strings here are short).
      for (let q = from[code]!, end = from[code + 1]!; q < end;) bytes[p++] = src[q++]!;
    }
    offsets[i + 1] = p;
  }
}
