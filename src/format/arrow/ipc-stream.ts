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
  /**
   * Reserves room for a padded buffer of `length` bytes at the body's end; returns its
   * absolute position. Not zeroed: every writer below stores each byte of its buffer (a
   * bitmap a whole byte at a time), and `done` zeroes the padding, so no byte of the
   * output is written twice.
   */
  const reserve = (length: number): number => {
    out.ensure(pad8(length));
    return out.pos;
  };
  const done = (p: number, length: number): void => {
    header.buffer(out.buf, at, b++, p - body, length);
    out.buf.fill(0, p + length, p + pad8(length));
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
        const src = new Float64Array(c.values.buffer, c.values.byteOffset, c.values.length);
        gather8(new Float64Array(out.buf.buffer, out.buf.byteOffset + p, n), src, oc, rows, n);
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
        // Slack: writeStrings may store words (zeros) past its last value.
        const p = reserve(pad8(offsetsLength) + room + STRING_SLACK);
        const base = out.buf.byteOffset + p;
        const q = p + pad8(offsetsLength);
        const total = writeStrings(
          new Int32Array(out.buf.buffer, base, n + 1),
          new Uint8Array(out.buf.buffer, out.buf.byteOffset + q, room + STRING_SLACK),
          c,
          oc,
          page,
        );
        done(p, offsetsLength);
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
      gather8(new Float64Array(out, at, n), new Float64Array(buffer, byteOffset, length), oc, rows, n);
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

/**
 * 64-bit values (doubles, and int64 seen as doubles: no BigInt per value) as one 8-byte
 * load and store each: V8 moves a Float64Array element to another without touching its
 * bits, NaN payloads included (test/format-arrow-stream.test.ts holds it to that).
 */
function gather8(dst: Float64Array, src: Float64Array, oc: OutputColumn, rows: Int32Array, n: number): void {
  if (oc.at === 'position') dst.set(src.subarray(0, n));
  else for (let i = 0; i < n; i++) dst[i] = src[rows[i]!]!;
}

/** 2^52: an integer v in [0, 2^52) plus this is a double whose 52-bit mantissa is v and whose high word starts 0x433. */
const TWO_52 = 4503599627370496;
const TWO_52_HIGH = 0x43300000;

/** µs (Float64) -> int64 at the column's unit, little-endian words. */
function writeTimestamps(dst: Int32Array, src: Float64Array, div: number, oc: OutputColumn, page: PageView): void {
  const { rows, count: n } = page;
  const byRow = oc.at === 'row';
  // µs are whole numbers already: no division or rounding per value. A µs instant of
  // 1970-2112 plus 2^52 is a double whose low word is the instant's and whose high word is
  // 0x433 then the instant's high bits: gathered as doubles (one load and store a value,
  // as a Float64 column is), then the high words fixed in a pass over the output (cache-hot).
  // Anything else (before 1970, NaN, a null's filler, which becomes 0) is re-done exactly.
  if (div === 1) {
    const wide = new Float64Array(dst.buffer, dst.byteOffset, n);
    if (byRow) for (let i = 0; i < n; i++) wide[i] = src[rows[i]!]! + TWO_52;
    else for (let i = 0; i < n; i++) wide[i] = src[i]! + TWO_52;
    for (let i = 0; i < n; i++) {
      const high = dst[2 * i + 1]! - TWO_52_HIGH;
      if (high >>> 0 < 0x100000) dst[2 * i + 1] = high;
      else {
        const v = src[byRow ? rows[i]! : i]! || 0;
        const hi = Math.floor(v / 4294967296);
        dst[2 * i] = v - hi * 4294967296;
        dst[2 * i + 1] = hi;
      }
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

/**
 * Bit i set when src at row i is non-zero (a validity bitmap, or a Bool column's values);
 * dst starts zeroed. Eight bits are put together before one store of their byte. Returns
 * how many were set.
 */
function writeBits(dst: Uint8Array, src: Uint8Array, oc: OutputColumn, rows: Int32Array, n: number): number {
  const byRow = oc.at === 'row';
  let set = 0;
  for (let i = 0; i < n; i += 8) {
    const end = Math.min(n, i + 8);
    let byte = 0;
    if (byRow)
      for (let j = i; j < end; j++) {
        const bit = src[rows[j]!] !== 0 ? 1 : 0;
        byte |= bit << (j - i);
        set += bit;
      }
    else
      for (let j = i; j < end; j++) {
        const bit = src[j] !== 0 ? 1 : 0;
        byte |= bit << (j - i);
        set += bit;
      }
    dst[i >> 3] = byte;
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

/** Values of a dictionary copied as whole 4-byte words at most this many a value (longer: byte by byte). */
const WORDS_MAX = 8;
/** Bytes a string column's room needs past its last value: the words written past it (writeStrings). */
export const STRING_SLACK = 4 * WORDS_MAX;

/** A dictionary whose values are all at most `width` 4-byte words: each value zero-padded to `width` words, and its length, per code. */
interface WordValues {
  readonly width: number;
  readonly words: Int32Array;
  readonly length: Uint8Array;
}

/** Per dictionary (a generation's, freed with it), computed on first use: null when a value is longer than WORDS_MAX words. */
const wordCache = new WeakMap<StringDictionary, WordValues | null>();

function wordValues(dict: StringDictionary): WordValues | null {
  let v = wordCache.get(dict);
  if (v !== undefined) return v;
  const { utf8, utf8Offsets } = dict;
  const codes = utf8Offsets.length - 1;
  let longest = 0;
  for (let c = 0; c < codes; c++) longest = Math.max(longest, utf8Offsets[c + 1]! - utf8Offsets[c]!);
  // Two words at least: values of up to 8 bytes (most keys) take the loop of two stores.
  const width = Math.max(2, Math.ceil(longest / 4));
  if (width > WORDS_MAX) v = null;
  else {
    const bytes = new Uint8Array(codes * width * 4);
    const length = new Uint8Array(codes);
    for (let c = 0; c < codes; c++) {
      bytes.set(utf8.subarray(utf8Offsets[c]!, utf8Offsets[c + 1]!), c * width * 4);
      length[c] = utf8Offsets[c + 1]! - utf8Offsets[c]!;
    }
    v = { width, words: new Int32Array(bytes.buffer), length };
  }
  wordCache.set(dict, v);
  return v;
}

/**
 * A stored column without nulls from a dictionary of one value: every cell is that value,
 * so its offsets are multiples of its length and its bytes are copied in doubling runs.
 */
function writeOneValue(offsets: Int32Array, bytes: Uint8Array, c: StringColumn, n: number): number {
  const from = c.dict.utf8Offsets;
  const len = from[1]! - from[0]!;
  for (let i = 0; i <= n; i++) offsets[i] = i * len;
  const total = n * len;
  if (total === 0) return 0;
  bytes.set(c.dict.utf8.subarray(from[0]!, from[1]!), 0);
  for (let have = len; have < total; have *= 2) bytes.copyWithin(have, 0, Math.min(have, total - have));
  return total;
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
    if (from.length === 2) return writeOneValue(offsets, bytes, c, n);
    const short = wordValues(c.dict);
    if (short !== null) {
      // Values of at most WORDS_MAX words: that many 4-byte stores per cell instead of a
      // byte loop. The stores write past the value: the next value overwrites that, and
      // past the last one they write its words' zero fill, so the padding stays zero
      // (STRING_SLACK bytes of room the caller reserved).
      const out = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const { width, words, length } = short;
      if (width === 2) {
        for (let i = 0; i < n; i++) {
          const code = codes[rows[i]!]!;
          out.setInt32(p, words[2 * code]!, true);
          out.setInt32(p + 4, words[2 * code + 1]!, true);
          p += length[code]!;
          offsets[i + 1] = p;
        }
        return p;
      }
      for (let i = 0; i < n; i++) {
        const code = codes[rows[i]!]!;
        for (let j = 0, w = code * width; j < width; j++) out.setInt32(p + 4 * j, words[w + j]!, true);
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
