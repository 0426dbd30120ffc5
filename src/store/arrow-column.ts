import { endianness } from 'node:os';
import type { Data } from 'apache-arrow';
import type { IntArray, TimeUnit } from './column.js';
import type { DecodedColumn } from './decoded-column.js';
import { scatterInto } from './scatter.js';
import { allocF64, allocI32, allocShared, allocU8 } from './shared-memory.js';
import { Utf8Coder } from './utf8-coder.js';

/**
 * One snapshot column as Arrow hands it over (its record batches), already checked against
 * contract 6 but not decoded yet: the table builder decodes each column once, straight into
 * its final row order. `rank[j]` is where snapshot row j goes; null keeps snapshot order.
 */
export type ArrowColumn = { readonly name: string; readonly chunks: readonly Data[]; readonly rows: number; readonly hasNulls: boolean } & (
  | { readonly kind: 'date32' | 'int64' | 'bool' }
  | { readonly kind: 'timestamp'; readonly unit: TimeUnit }
  | { readonly kind: 'float'; readonly single: boolean }
  | { readonly kind: 'int'; readonly ctor: IntCtor }
  | { readonly kind: 'string'; readonly dictionary: boolean }
);

export type IntCtor = { new (buffer: SharedArrayBuffer, byteOffset?: number, length?: number): IntArray; BYTES_PER_ELEMENT: number };

export function decodeArrowColumn(c: ArrowColumn, rank: Int32Array | null): DecodedColumn {
  const { name, chunks, rows } = c;
  const validity = c.hasNulls ? decodeValidityInto(chunks, allocU8(rows), rank) : null;
  const values = allocValues(c, rows);
  const strings = decodeValuesInto(c, values, rank);
  switch (c.kind) {
    case 'timestamp':
      return { kind: 'timestamp', name, validity, unit: c.unit, values: values as Float64Array };
    case 'string':
      return { kind: 'string', name, validity, codes: values as Int32Array, strings: strings! };
    default:
      return { kind: c.kind, name, validity, values } as DecodedColumn;
  }
}

/** What a column's values are held in: the typed array of its kind (strings: their Int32 codes). */
export type ValueArray = Float64Array | Float32Array | BigInt64Array | IntArray;

/** An array for `rows` values of the column's kind, on shared memory. */
export function allocValues(c: ArrowColumn, rows: number): ValueArray {
  switch (c.kind) {
    case 'date32':
    case 'string':
      return allocI32(rows);
    case 'int64':
      return allocShared(BigInt64Array, rows);
    case 'float':
      return c.single ? allocShared(Float32Array, rows) : allocF64(rows);
    case 'int':
      return allocShared(c.ctor, rows);
    case 'bool':
      return allocU8(rows);
    case 'timestamp':
      return allocF64(rows);
  }
}

/**
 * Decodes the column's values into `out` (exactly `c.rows` cells, from allocValues: a
 * whole array or a part's stretch of a generation's), snapshot row j at `rank[j]`.
 * Strings: `out` gets codes into the returned distinct values (order of first appearance).
 */
export function decodeValuesInto(c: ArrowColumn, out: ValueArray, rank: Int32Array | null): string[] | null {
  const { chunks } = c;
  switch (c.kind) {
    case 'date32':
    case 'int64':
    case 'float':
    case 'int':
      placeFixed(chunks, out, rank);
      return null;
    case 'bool':
      decodeBits(chunks, out as Uint8Array, rank);
      return null;
    case 'timestamp':
      decodeTimestamps(chunks, out as Float64Array, unitScale(c.unit), rank);
      return null;
    case 'string':
      return c.dictionary ? decodeDictionary(chunks, out as Int32Array, rank) : decodeUtf8(chunks, out as Int32Array, rank);
  }
}

export function unitScale(unit: TimeUnit): number {
  return unit === 's' ? 1_000_000 : unit === 'ms' ? 1_000 : 1;
}

const SAFE_US = 2 ** 53;
const TWO_32 = 4294967296;
/** Int64 cells are read as two 32-bit words (no BigInt per cell); the words' order follows the platform. */
const LO = endianness() === 'LE' ? 0 : 1;
const HI = 1 - LO;

/**
 * Index of the first non-null timestamp that is out of range once in µs, or -1. A null slot
 * holds whatever the writer left (pandas' NaT is -2^63): it is never range-checked.
 * hi * 2^32 + lo is one correctly rounded addition, so it equals Number(BigInt) exactly and
 * the check refuses exactly what it refused with BigInt.
 */
export function firstTimestampOutOfRange(chunks: readonly Data[], unit: TimeUnit): number {
  const scale = unitScale(unit);
  let at = 0;
  for (const d of chunks) {
    const w = words(d);
    const bm = d.nullCount > 0 ? d.nullBitmap : undefined;
    for (let i = 0; i < d.length; i++) {
      if (bm !== undefined && ((bm[(d.offset + i) >> 3]! >> ((d.offset + i) & 7)) & 1) === 0) continue;
      const us = (w[2 * i + HI]! * TWO_32 + (w[2 * i + LO]! >>> 0)) * scale;
      if (!(us > -SAFE_US && us < SAFE_US)) return at + i;
    }
    at += d.length;
  }
  return -1;
}

function words(d: Data): Int32Array {
  const v = d.values as BigInt64Array;
  return new Int32Array(v.buffer, v.byteOffset, d.length * 2);
}

/** Range-checked first (firstTimestampOutOfRange): every valid value is exact in µs here. */
function decodeTimestamps(chunks: readonly Data[], out: Float64Array, scale: number, rank: Int32Array | null): Float64Array {
  let at = 0;
  for (const d of chunks) {
    const w = words(d);
    const bm = d.nullCount > 0 ? d.nullBitmap : undefined;
    for (let i = 0; i < d.length; i++) {
      const to = rank === null ? at + i : rank[at + i]!;
      if (bm !== undefined && ((bm[(d.offset + i) >> 3]! >> ((d.offset + i) & 7)) & 1) === 0) out[to] = 0;
      else out[to] = (w[2 * i + HI]! * TWO_32 + (w[2 * i + LO]! >>> 0)) * scale;
    }
    at += d.length;
  }
  return out;
}

type Fixed = Float64Array | Float32Array | BigInt64Array | IntArray;

function placeFixed(chunks: readonly Data[], out: Fixed, rank: Int32Array | null): void {
  let at = 0;
  for (const d of chunks) {
    // `values` is already sliced to the chunk's offset, but may be padded past its length.
    const src = (d.values as Fixed).subarray(0, d.length);
    if (rank === null) (out as { set(a: ArrayLike<unknown>, o: number): void }).set(src, at);
    else scatterInto(src, out, rank, at);
    at += d.length;
  }
}

/** Validity (1 valid, 0 null) into `out` (exactly the column's rows), snapshot row j at `rank[j]`. */
export function decodeValidityInto(chunks: readonly Data[], out: Uint8Array, rank: Int32Array | null): Uint8Array {
  out.fill(1);
  let at = 0;
  for (const d of chunks) {
    const bm = d.nullBitmap;
    if (d.nullCount > 0 && bm !== undefined && bm.length > 0) readBits(bm, d.offset, d.length, out, rank, at);
    at += d.length;
  }
  return out;
}

function decodeBits(chunks: readonly Data[], out: Uint8Array, rank: Int32Array | null): Uint8Array {
  let at = 0;
  for (const d of chunks) {
    readBits(d.values as Uint8Array, d.offset, d.length, out, rank, at);
    at += d.length;
  }
  return out;
}

function readBits(bits: Uint8Array, offset: number, length: number, out: Uint8Array, rank: Int32Array | null, at: number): void {
  if (rank === null) {
    for (let i = 0; i < length; i++) out[at + i] = (bits[(offset + i) >> 3]! >> ((offset + i) & 7)) & 1;
  } else {
    for (let i = 0; i < length; i++) out[rank[at + i]!] = (bits[(offset + i) >> 3]! >> ((offset + i) & 7)) & 1;
  }
}

function decodeUtf8(chunks: readonly Data[], codes: Int32Array, rank: Int32Array | null): string[] {
  const coder = new Utf8Coder();
  let at = 0;
  for (const d of chunks) {
    codeUtf8Chunk(coder, d.valueOffsets as Int32Array, d.values as Uint8Array, d.length, codes, rank, at);
    at += d.length;
  }
  const { strings, remap } = coder.finish();
  if (remap !== null) for (let i = 0; i < codes.length; i++) codes[i] = remap[codes[i]!]!;
  return strings;
}

/**
 * One record batch of a Utf8 column. Runs of one value are common (model_version, labels):
 * comparing a cell's bytes with the cell before costs less than hashing them.
 */
function codeUtf8Chunk(coder: Utf8Coder, offsets: Int32Array, bytes: Uint8Array, n: number, codes: Int32Array, rank: Int32Array | null, at: number): void {
  let prevFrom = 0;
  let prevLen = -1;
  let prevCode = 0;
  let from = offsets[0]!;
  for (let i = 0; i < n; i++) {
    const to = offsets[i + 1]!;
    const len = to - from;
    const code = len === prevLen && sameBytes(bytes, from, prevFrom, len) ? prevCode : coder.code(bytes, from, to);
    codes[rank === null ? at + i : rank[at + i]!] = code;
    prevFrom = from;
    prevLen = len;
    prevCode = code;
    from = to;
  }
}

function sameBytes(bytes: Uint8Array, a: number, b: number, len: number): boolean {
  for (let j = 0; j < len; j++) if (bytes[a + j] !== bytes[b + j]) return false;
  return true;
}

function decodeDictionary(chunks: readonly Data[], codes: Int32Array, rank: Int32Array | null): string[] {
  const strings: string[] = [];
  const codeOf = new Map<string, number>();
  let at = 0;
  let dictionary: unknown = null;
  let remap = new Int32Array(0);
  for (const d of chunks) {
    // Dictionaries may differ per batch (deltas, replacements): map each batch's indices
    // onto one column-wide code space. Batches sharing one dictionary share the mapping.
    if (d.dictionary !== dictionary || dictionary === null) {
      dictionary = d.dictionary ?? null;
      const local = d.dictionary ? (d.dictionary.toArray() as Array<string | null>) : [];
      remap = new Int32Array(local.length);
      for (let j = 0; j < local.length; j++) {
        const s = local[j] ?? '';
        let c = codeOf.get(s);
        if (c === undefined) {
          c = strings.length;
          strings.push(s);
          codeOf.set(s, c);
        }
        remap[j] = c;
      }
    }
    const idx = d.values as IntArray;
    for (let i = 0; i < d.length; i++) {
      const j = idx[i]!;
      // A null slot's index is arbitrary (often 0, maybe out of range): validity decides.
      codes[rank === null ? at + i : rank[at + i]!] = j >= 0 && j < remap.length ? remap[j]! : 0;
    }
    at += d.length;
  }
  return strings;
}
