import type { CodeArray, Column, IntArray, StringDictionary, TimeUnit, Validity } from '../../store/column.js';
import { copyBytes } from '../bytes/byte-writer.js';
import { putFloat, putFloatAt } from '../bytes/format-float.js';
import { MAX_NUMBER_BYTES, putInt, putInt64, putInt64Halves, putNull, putUint } from '../bytes/format-number.js';
import { jsonLiterals } from './json-literals.js';
import { MAX_DATE_BYTES, MAX_TIMESTAMP_BYTES, putDateQuoted, putIsoMicrosAt, putIsoMillisAt, putIsoSecondsAt } from '../bytes/format-time.js';

/** Writes the JSON value of one cell at p (room reserved); returns the next position. */
export type CellWriter = (b: Uint8Array, p: number, row: number) => number;

export interface CompiledCell {
  readonly write: CellWriter;
  /** Upper bound on the bytes `write` produces for any row. */
  readonly maxBytes: number;
}

const TRUE = [0x74, 0x72, 0x75, 0x65];
const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Chooses, once per column, the writer for its kind and options, so the per-row loop only
 * calls. Each kind gets its own function literal, keeping every element access site
 * monomorphic on one typed-array type.
 */
export function compileCell(column: Column): CompiledCell {
  const cell = compileValue(column);
  if (column.validity === null) return cell;
  return { write: nullable(column.validity, cell.write), maxBytes: Math.max(4, cell.maxBytes) };
}

function nullable(validity: NonNullable<Validity>, write: CellWriter): CellWriter {
  return (b, p, row) => (validity[row] === 0 ? putNull(b, p) : write(b, p, row));
}

function compileValue(column: Column): CompiledCell {
  switch (column.kind) {
    case 'float':
      return { write: floatWriter(column.values), maxBytes: MAX_NUMBER_BYTES };
    case 'int':
      return { write: intWriter(column.values), maxBytes: MAX_NUMBER_BYTES };
    case 'int64':
      return { write: int64Writer(column.values), maxBytes: MAX_NUMBER_BYTES };
    case 'bool': {
      const values = column.values;
      return { write: (b, p, row) => putBool(b, p, values[row] !== 0), maxBytes: 5 };
    }
    case 'string':
      return stringWriter(column.codes, column.dict);
    case 'date32': {
      const values = column.values;
      return { write: (b, p, row) => putDateQuoted(b, p, values[row]!), maxBytes: MAX_DATE_BYTES };
    }
    case 'timestamp':
      return { write: timestampWriter(column.unit, column.values), maxBytes: MAX_TIMESTAMP_BYTES };
  }
}

function putBool(b: Uint8Array, p: number, v: boolean): number {
  const bytes = v ? TRUE : FALSE;
  for (let i = 0; i < bytes.length; i++) b[p + i] = bytes[i]!;
  return p + bytes.length;
}

function floatWriter(values: Float64Array | Float32Array): CellWriter {
  if (values instanceof Float64Array) return (b, p, row) => putFloatAt(b, p, values, row);
  return float32Writer(values);
}

/** Slots of a float32 column's text cache (a power of two). */
const F32_SLOTS = 2048;

/**
 * A Float32 cell renders as the shortest text of its widened double, which mostly needs the
 * slow 16–17 digit path (0.76 stored as float32 is -0.7599999904632568). Float32 columns hold
 * few distinct values (24-bit mantissas of rounded measurements), so each column keeps the
 * text of recently written values, direct-mapped by their bits (about 70 KB per column).
 */
function float32Writer(values: Float32Array): CellWriter {
  const bits = new Int32Array(values.buffer, values.byteOffset, values.length);
  const tags = new Int32Array(F32_SLOTS);
  const lengths = new Uint8Array(F32_SLOTS); // 0: empty (every text has at least one byte)
  const text = new Uint8Array(F32_SLOTS * MAX_NUMBER_BYTES);
  return (b, p, row) => {
    const v = bits[row]!;
    const slot = Math.imul(v, 0x9e3779b1) >>> 21;
    const o = slot * MAX_NUMBER_BYTES;
    let n = lengths[slot]!;
    if (n === 0 || tags[slot] !== v) {
      n = putFloat(text, o, values[row]!) - o;
      lengths[slot] = n;
      tags[slot] = v;
    }
    for (let i = 0; i < n; i++) b[p + i] = text[o + i]!;
    return p + n;
  };
}

function intWriter(values: IntArray): CellWriter {
  if (values instanceof Int32Array) return (b, p, row) => putInt(b, p, values[row]!);
  if (values instanceof Uint32Array) return (b, p, row) => putUint(b, p, values[row]!);
  if (values instanceof Uint8Array || values instanceof Uint16Array) {
    return (b, p, row) => putUint(b, p, values[row]!);
  }
  return (b, p, row) => putInt(b, p, values[row]!);
}

/**
 * Reads Int64 cells as two int32 halves of the same memory: reading a BigInt64Array element
 * allocates a BigInt, which a hot loop should not do per cell.
 */
function int64Writer(values: BigInt64Array): CellWriter {
  if (!LITTLE_ENDIAN) return (b, p, row) => putInt64(b, p, values[row]!);
  const halves = new Int32Array(values.buffer, values.byteOffset, values.length * 2);
  return (b, p, row) => putInt64Halves(b, p, halves[2 * row + 1]!, halves[2 * row]! >>> 0);
}

function stringWriter(codes: CodeArray, dict: StringDictionary): CompiledCell {
  const { bytes: json, offsets, maxBytes } = jsonLiterals(dict);
  const write: CellWriter = (b, p, row) => {
    const code = codes[row]!;
    return copyBytes(b, p, json, offsets[code]!, offsets[code + 1]!);
  };
  return { write, maxBytes };
}

function timestampWriter(unit: TimeUnit, values: Float64Array): CellWriter {
  switch (unit) {
    case 's':
      return (b, p, row) => putIsoSecondsAt(b, p, values, row);
    case 'ms':
      return (b, p, row) => putIsoMillisAt(b, p, values, row);
    case 'us':
      return (b, p, row) => putIsoMicrosAt(b, p, values, row);
  }
}
