import { ByteWriter } from '../bytes/byte-writer.js';
import type { StringColumn, StringDictionary } from '../../store/column.js';
import type { OutputColumn, PageView } from '../page-view.js';
import { ArrowLayout } from './arrow-layout.js';
import { writeDictionaryBatch } from './dictionary-batch.js';

/**
 * A page as an Arrow IPC stream (contract 9), framed here and written straight into the
 * answer's ByteWriter: the schema message, one record batch, the end-of-stream marker;
 * zero rows is the schema and the marker only.
 *
 * Both message headers come from the layout (ArrowLayout: encoded once; the answer writes
 * its envelope into the schema and its numbers into the batch header). The body, which is
 * all of the bytes, is gathered from the store's typed arrays directly into the output at
 * its final offset: one pass per column, which also counts its nulls and its string bytes,
 * no intermediate arrays, no per-row JS values, no copy of the finished body. Layout per
 * the Arrow columnar format: every buffer 8-byte aligned and padded with zeros, a validity
 * bitmap for columns that can hold nulls (length 0 otherwise), Utf8 as int32 offsets +
 * bytes, Timestamp as int64 at the column's unit with time zone UTC, Bool bit-packed.
 */
export function writeArrowStream(out: ByteWriter, page: PageView, layout: ArrowLayout, writeLast: ((out: ByteWriter) => void) | null = null): void {
  // A schema message is a whole number of 8-byte words: the batch part keeps the stream's alignment.
  layout.schema.write(out, writeLast);
  writeArrowBatch(out, page, layout);
}

/** The rest of the stream after the schema: the record batch (none for zero rows) and the end-of-stream marker. */
export function writeArrowBatch(out: ByteWriter, page: PageView, layout: ArrowLayout): void {
  // Typed-array views need 8-byte alignment in the output's memory; a misaligned writer
  // (never the serving threads', whose answers start at 0) goes through an aligned one.
  if (((out.buf.byteOffset + out.pos) & 7) !== 0) {
    const aligned = new ByteWriter(64 * 1024);
    writeAligned(aligned, page, layout);
    out.bytes(aligned.view());
    return;
  }
  writeAligned(out, page, layout);
}

/** The whole stream as owned bytes, with a layout made for this one answer (the file channel). */
export function arrowStreamBytes(page: PageView, metadata: ReadonlyMap<string, string>): Uint8Array {
  const w = new ByteWriter(64 * 1024);
  writeArrowStream(w, page, new ArrowLayout(page.columns, [...metadata], null));
  return Buffer.from(w.view());
}

const pad8 = (n: number): number => (n + 7) & ~7;

/** Above this many bytes of room for one string column, its exact size is counted first instead. */
const STRING_ROOM_MAX = 8 << 20;

function writeAligned(out: ByteWriter, page: PageView, layout: ArrowLayout): void {
  if (page.count > 0) {
    // A passthrough's dictionary comes before the batch that reads it, its id the column's index (schema-message.ts).
    page.columns.forEach((oc, i) => {
      if (oc.arrow?.dictionary) writeDictionaryBatch(out, i, oc.arrow.dictionary.values);
    });
    writeBatch(out, page, layout);
  }
  out.ensure(8);
  out.buf.writeInt32LE(-1, out.pos);
  out.buf.writeInt32LE(0, out.pos + 4);
  out.pos += 8;
}

/**
 * The record batch: the header template, then each column's buffers in order, each one
 * reported to the header (offset, length; the node's null count) as soon as it is written.
 * Room is reserved per buffer, and typed views are made after each reservation (it may
 * move the storage; positions are offsets, so the header is patched wherever it is).
 */
function writeBatch(out: ByteWriter, page: PageView, layout: ArrowLayout): void {
  const { columns, rows, count: n } = page;
  const header = layout.batch;
  const at = header.write(out, n);
  const body = out.pos;
  let b = 0;
  /** Reserves a zeroed, padded buffer of `length` bytes at the body's end; returns its absolute position. */
  const reserve = (length: number): number => {
    const p = out.pos;
    out.ensure(pad8(length));
    out.buf.fill(0, p, p + pad8(length));
    return p;
  };
  const done = (p: number, length: number): void => {
    header.buffer(out.buf, at, b++, p - body, length);
    out.pos = p + pad8(length);
  };
  for (let i = 0; i < columns.length; i++) {
    const oc = columns[i]!;
    if (oc.arrow !== undefined) {
      // An Arrow column as given (format/arrow-passthrough.ts): its buffers copied, nothing decoded.
      const a = oc.arrow.array;
      header.node(out.buf, at, i, a.length, a.nullCount);
      for (const bytes of a.buffers) {
        const p = reserve(bytes.byteLength);
        out.buf.set(bytes, p);
        done(p, bytes.byteLength);
      }
      continue;
    }
    const c = oc.column;
    let nulls = 0;
    if (c.validity === null) done(out.pos, 0);
    else {
      const length = Math.ceil(n / 8);
      const p = reserve(length);
      nulls = n - writeBits(new Uint8Array(out.buf.buffer, out.buf.byteOffset + p, length), c.validity, oc, rows, n);
      done(p, length);
    }
    header.node(out.buf, at, i, n, nulls);
    switch (c.kind) {
      case 'float':
      case 'int': {
        const length = n * c.values.BYTES_PER_ELEMENT;
        const p = reserve(length);
        gatherWidth(out.buf.buffer, out.buf.byteOffset + p, c.values, oc, page);
        done(p, length);
        break;
      }
      case 'date32': {
        const p = reserve(n * 4);
        gather4(new Int32Array(out.buf.buffer, out.buf.byteOffset + p, n), c.values, oc, rows, n);
        done(p, n * 4);
        break;
      }
      case 'int64': {
        const p = reserve(n * 8);
        const src = new Int32Array(c.values.buffer, c.values.byteOffset, c.values.length * 2);
        gatherPairs(new Int32Array(out.buf.buffer, out.buf.byteOffset + p, 2 * n), src, oc, rows, n);
        done(p, n * 8);
        break;
      }
      case 'timestamp': {
        const p = reserve(n * 8);
        writeTimestamps(
          new Int32Array(out.buf.buffer, out.buf.byteOffset + p, 2 * n),
          c.values,
          c.unit === 's' ? 1_000_000 : c.unit === 'ms' ? 1000 : 1,
          oc,
          page,
        );
        done(p, n * 8);
        break;
      }
      case 'bool': {
        const length = Math.ceil(n / 8);
        const p = reserve(length);
        writeBits(new Uint8Array(out.buf.buffer, out.buf.byteOffset + p, length), c.values, oc, rows, n);
        done(p, length);
        break;
      }
      case 'string': {
        const offsetsLength = (n + 1) * 4;
        // A computed column's dictionary is its answer's own (a join's passthrough text): the layout's maximum is not its.
        const room = oc.at === 'position' || n * layout.maxUtf8[i]! > STRING_ROOM_MAX ? stringTotal(c, oc, rows, n) : n * layout.maxUtf8[i]!;
        // 8 bytes of slack: writeStrings may store a word (zeros) past its last value.
        const p = reserve(pad8(offsetsLength) + room + 8);
        const base = out.buf.byteOffset + p;
        const q = p + pad8(offsetsLength);
        const total = writeStrings(new Int32Array(out.buf.buffer, base, n + 1), new Uint8Array(out.buf.buffer, out.buf.byteOffset + q, room + 8), c, oc, page);
        done(p, offsetsLength);
        // The bytes' padding after `total` was zeroed by the reservation.
        done(q, total);
        break;
      }
    }
  }
  header.finish(out.buf, at, out.pos - body);
}

type Numbers = Float32Array | Float64Array | Int8Array | Int16Array | Int32Array | Uint8Array | Uint16Array | Uint32Array;

/**
 * dst = src gathered by row, copied as raw words of the value's width: one monomorphic loop
 * per width instead of one loop over eight array types (which V8 compiles megamorphic, at
 * several times the cost per value). Bits are copied unchanged, NaN payloads included.
 */
function gatherWidth(out: ArrayBufferLike, at: number, values: Numbers, oc: OutputColumn, page: PageView): void {
  const { rows, count: n } = page;
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
function writeTimestamps(dst: Int32Array, src: Float64Array, div: number, oc: OutputColumn, page: PageView): void {
  const { rows, count: n } = page;
  const byRow = oc.at === 'row';
  // µs are whole numbers already: no division or rounding per value (NaN, a null's filler, becomes 0).
  if (div === 1) {
    for (let i = 0; i < n; i++) {
      const v = src[byRow ? rows[i]! : i]! || 0;
      const hi = Math.floor(v / 4294967296);
      dst[2 * i] = v - hi * 4294967296;
      dst[2 * i + 1] = hi;
    }
    return;
  }
  for (let i = 0; i < n; i++) {
    const v = Math.round(src[byRow ? rows[i]! : i]! / div) || 0;
    const hi = Math.floor(v / 4294967296);
    dst[2 * i] = v - hi * 4294967296;
    dst[2 * i + 1] = hi;
  }
}

/** Bit i set when src at row i is non-zero (a validity bitmap, or a Bool column's values); dst starts zeroed. Returns how many were set. */
function writeBits(dst: Uint8Array, src: Uint8Array, oc: OutputColumn, rows: Int32Array, n: number): number {
  const byRow = oc.at === 'row';
  let set = 0;
  for (let i = 0; i < n; i++) {
    if (src[byRow ? rows[i]! : i] !== 0) {
      dst[i >> 3] = dst[i >> 3]! | (1 << (i & 7));
      set++;
    }
  }
  return set;
}

/** Exact UTF-8 bytes of a string column's page (only when the longest value times the rows is too much room). */
function stringTotal(c: StringColumn, oc: OutputColumn, rows: Int32Array, n: number): number {
  const byRow = oc.at === 'row';
  const { codes, validity } = c;
  const offsets = c.dict.utf8Offsets;
  let total = 0;
  for (let i = 0; i < n; i++) {
    const r = byRow ? rows[i]! : i;
    if (validity !== null && validity[r] === 0) continue;
    const code = codes[r]!;
    total += offsets[code + 1]! - offsets[code]!;
  }
  return total;
}

/** A dictionary whose values are all at most 8 bytes, as two little-endian words and a length per code. */
interface ShortValues {
  readonly lo: Int32Array;
  readonly hi: Int32Array;
  readonly length: Uint8Array;
}

/** Per dictionary (a generation's, freed with it), computed on first use: null when a value is longer than 8 bytes. */
const shortCache = new WeakMap<StringDictionary, ShortValues | null>();

function shortValues(dict: StringDictionary): ShortValues | null {
  let v = shortCache.get(dict);
  if (v !== undefined) return v;
  const { utf8, utf8Offsets } = dict;
  const codes = utf8Offsets.length - 1;
  v = { lo: new Int32Array(codes), hi: new Int32Array(codes), length: new Uint8Array(codes) };
  const word = new Uint8Array(8);
  const words = new Int32Array(word.buffer);
  for (let c = 0; c < codes && v !== null; c++) {
    const len = utf8Offsets[c + 1]! - utf8Offsets[c]!;
    if (len > 8) v = null;
    else {
      word.fill(0);
      word.set(utf8.subarray(utf8Offsets[c]!, utf8Offsets[c + 1]!));
      v.lo[c] = words[0]!;
      v.hi[c] = words[1]!;
      v.length[c] = len;
    }
  }
  shortCache.set(dict, v);
  return v;
}

/** Utf8 offsets and bytes, each value copied from its dictionary's UTF-8 (store/column.ts); returns the bytes written. */
function writeStrings(offsets: Int32Array, bytes: Uint8Array, c: StringColumn, oc: OutputColumn, page: PageView): number {
  const { rows, count: n } = page;
  const byRow = oc.at === 'row';
  const { codes, validity } = c;
  const src = c.dict.utf8;
  const from = c.dict.utf8Offsets;
  let p = 0;
  offsets[0] = 0;
  if (byRow && validity === null) {
    const short = shortValues(c.dict);
    if (short !== null) {
      // Values of at most 8 bytes: two 4-byte stores per cell instead of a byte loop. The
      // stores write past the value: the next value overwrites that, and past the last one
      // they write its words' zero fill, so the padding stays zero (8 bytes of room the
      // caller reserved).
      const out = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const { lo, hi, length } = short;
      for (let i = 0; i < n; i++) {
        const code = codes[rows[i]!]!;
        out.setInt32(p, lo[code]!, true);
        out.setInt32(p + 4, hi[code]!, true);
        p += length[code]!;
        offsets[i + 1] = p;
      }
      return p;
    }
    // A stored column without nulls in its own loop, with nothing to test per cell.
    for (let i = 0; i < n; i++) {
      const code = codes[rows[i]!]!;
      for (let q = from[code]!, end = from[code + 1]!; q < end;) bytes[p++] = src[q++]!;
      offsets[i + 1] = p;
    }
    return p;
  }
  for (let i = 0; i < n; i++) {
    const r = byRow ? rows[i]! : i;
    if (validity === null || validity[r] !== 0) {
      const code = codes[r]!;
      // A byte loop, not set(subarray): no view object per cell (strings here are short).
      for (let q = from[code]!, end = from[code + 1]!; q < end;) bytes[p++] = src[q++]!;
    }
    offsets[i + 1] = p;
  }
  return p;
}
