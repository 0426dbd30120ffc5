/**
 * Columnar JS data to Arrow IPC bytes. Used by the demo generator, by tests (which need
 * every Arrow type of contract 6, including ones the server must refuse) and by publishing.
 *
 * Buffers are assembled by hand with `makeData` rather than through arrow's builders: the
 * layout (validity bits, offsets, dictionary ids) is then exactly what we say, and the same
 * input always gives the same bytes.
 */
import {
  Bool,
  Dictionary,
  Field,
  Int32,
  Int64,
  RecordBatch,
  RecordBatchFileWriter,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  Table,
  Utf8,
  makeData,
  makeVector,
} from 'apache-arrow';
import { FIXED_WIDTH, timestampType, type FixedWidthType, type TimeUnitName } from './arrow-types.js';
import type { Data, DataType, Vector } from 'apache-arrow';
import { utf8Data, Validity } from './arrow-buffers.js';

export type { TimeUnitName };
export type SmallIntType = 'int8' | 'int16' | 'int32' | 'uint8' | 'uint16' | 'uint32';

export type ColumnSpec =
  /** Days since the Unix epoch. */
  | { name: string; type: 'date32'; values: ArrayLike<number | null> }
  /** Integer counts of `unit` since the epoch; the timezone is always UTC. */
  | { name: string; type: 'timestamp'; unit: TimeUnitName; values: ArrayLike<number | bigint | null> }
  | { name: string; type: 'utf8'; values: ArrayLike<string | null> }
  /** Dictionary<Int32, Utf8>; one dictionary shared by every record batch. */
  | { name: string; type: 'dict-utf8'; values: ArrayLike<string | null> }
  | { name: string; type: 'float64' | 'float32'; values: ArrayLike<number | null> }
  | { name: string; type: SmallIntType; values: ArrayLike<number | null> }
  | { name: string; type: 'int64'; values: ArrayLike<bigint | number | null> }
  | { name: string; type: 'bool'; values: ArrayLike<boolean | null> };

export type ColumnType = ColumnSpec['type'];

export interface SnapshotSpec {
  columns: ColumnSpec[];
  /** Written as schema metadata `pitcache.series_key` (a JSON array). */
  seriesKey: string[];
  /** Rows per record batch; default: one batch. */
  batchRows?: number;
  /** Extra schema metadata. It is applied last, so a test may overwrite `pitcache.series_key`. */
  metadata?: Record<string, string>;
}

export const SERIES_KEY_METADATA = 'pitcache.series_key';

export type IpcFormat = 'file' | 'stream';

export function buildArrowSnapshot(spec: SnapshotSpec, format: IpcFormat = 'file'): Uint8Array {
  const table = buildArrowTable(spec);
  const writer = format === 'file' ? new RecordBatchFileWriter() : new RecordBatchStreamWriter();
  return writer.writeAll(table).toUint8Array(true);
}

/** The same snapshot as an in-memory arrow Table (for callers that want to inspect it). */
export function buildArrowTable(spec: SnapshotSpec): Table {
  const rows = checkColumns(spec.columns);
  const batchRows = spec.batchRows ?? Math.max(rows, 1);
  if (!Number.isInteger(batchRows) || batchRows < 1) throw new Error(`batchRows must be a positive integer, got ${batchRows}`);

  // Dictionary ids are explicit (the column index): arrow's default is a process-wide
  // counter, which would make two identical calls produce different bytes.
  const encoders = spec.columns.map((c, i) => columnEncoder(c, i));
  const fields = spec.columns.map((c, i) => new Field(c.name, encoders[i]!.type, true));
  const metadata = new Map<string, string>([[SERIES_KEY_METADATA, JSON.stringify(spec.seriesKey)]]);
  for (const [k, v] of Object.entries(spec.metadata ?? {})) metadata.set(k, v);
  const schema = new Schema(fields, metadata);

  const batches: RecordBatch[] = [];
  // An empty snapshot still gets one (empty) batch: some readers expect at least one.
  for (let start = 0; start < rows || batches.length === 0; start += batchRows) {
    const end = Math.min(rows, start + batchRows);
    const children = encoders.map((e) => e.slice(start, end));
    const struct = makeData({ type: new Struct(fields), length: end - start, nullCount: 0, children });
    batches.push(new RecordBatch(schema, struct));
  }
  return new Table(schema, batches);
}

function checkColumns(columns: ColumnSpec[]): number {
  const names = new Set<string>();
  let rows: number | null = null;
  for (const c of columns) {
    if (names.has(c.name)) throw new Error(`duplicate column name: ${c.name}`);
    names.add(c.name);
    if (rows !== null && c.values.length !== rows) {
      throw new Error(`column ${c.name} has ${c.values.length} values, expected ${rows}`);
    }
    rows = c.values.length;
  }
  return rows ?? 0;
}

interface ColumnEncoder {
  readonly type: DataType;
  slice(start: number, end: number): Data;
}

function columnEncoder(c: ColumnSpec, index: number): ColumnEncoder {
  switch (c.type) {
    case 'date32':
      return numeric('date32', c.values, checkInt(c.name));
    case 'timestamp':
      return int64Encoder(timestampType(c.unit), c.values, c.name);
    case 'float64':
      return numeric('float64', c.values, (v) => v);
    case 'float32':
      return numeric('float32', c.values, (v) => v);
    case 'int8':
      return numeric('int8', c.values, checkInt(c.name, -128, 127));
    case 'int16':
      return numeric('int16', c.values, checkInt(c.name, -32768, 32767));
    case 'int32':
      return numeric('int32', c.values, checkInt(c.name, -(2 ** 31), 2 ** 31 - 1));
    case 'uint8':
      return numeric('uint8', c.values, checkInt(c.name, 0, 255));
    case 'uint16':
      return numeric('uint16', c.values, checkInt(c.name, 0, 65535));
    case 'uint32':
      return numeric('uint32', c.values, checkInt(c.name, 0, 2 ** 32 - 1));
    case 'int64':
      return int64Encoder(new Int64(), c.values, c.name);
    case 'bool':
      return boolEncoder(c.values);
    case 'utf8':
      return { type: new Utf8(), slice: (s, e) => utf8Data(c.values, s, e) };
    case 'dict-utf8':
      return dictEncoder(c.values, index);
  }
}

type NumberArray = Int8Array | Int16Array | Int32Array | Uint8Array | Uint16Array | Uint32Array | Float32Array | Float64Array;

/** Fixed-width columns whose JS value is a number (all but the 64-bit integers). */
function numeric(kind: Exclude<FixedWidthType, 'int64'>, values: ArrayLike<number | null>, convert: (v: number) => number): ColumnEncoder {
  const [Type, Values] = FIXED_WIDTH[kind];
  const type = new Type();
  return {
    type,
    slice(start, end) {
      const n = end - start;
      const data = new Values(n) as NumberArray;
      const validity = new Validity(n);
      for (let i = 0; i < n; i++) {
        const v = values[start + i];
        if (v === null || v === undefined) validity.setNull(i);
        else data[i] = convert(v);
      }
      // makeData's overloads are per concrete type; `type` and `data` are paired by the caller.
      return makeData({ type, length: n, nullCount: validity.nullCount, nullBitmap: validity.bitmap(), data } as never);
    },
  };
}

function checkInt(column: string, min = -(2 ** 31), max = 2 ** 31 - 1): (v: number) => number {
  return (v) => {
    if (!Number.isInteger(v) || v < min || v > max) throw new Error(`column ${column}: ${v} is not an integer in [${min}, ${max}]`);
    return v;
  };
}

const TWO_32 = 2 ** 32;
const TWO_63 = 2n ** 63n;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * 64-bit integers (Int64, timestamps). Numbers are written as two 32-bit words rather than
 * through BigInt: a snapshot has hundreds of thousands of timestamps and a BigInt per value
 * is most of the cost of writing one.
 */
function int64Encoder(type: DataType, values: ArrayLike<number | bigint | null>, column: string): ColumnEncoder {
  return {
    type,
    slice(start, end) {
      const n = end - start;
      const data = new BigInt64Array(n);
      const words = new Uint32Array(data.buffer);
      const validity = new Validity(n);
      for (let i = 0; i < n; i++) {
        const v = values[start + i];
        if (v === null || v === undefined) validity.setNull(i);
        else if (typeof v === 'bigint') {
          if (v < -TWO_63 || v >= TWO_63) throw new Error(`column ${column}: ${v} does not fit in 64 bits`);
          data[i] = v;
        } else {
          // Any integral double converts exactly; beyond 2^53 pass a bigint to say which integer is meant.
          if (!Number.isInteger(v) || Math.abs(v) >= 2 ** 63) throw new Error(`column ${column}: ${v} is not an integer`);
          if (LITTLE_ENDIAN && Math.abs(v) <= Number.MAX_SAFE_INTEGER) {
            const hi = Math.floor(v / TWO_32);
            words[2 * i] = v - hi * TWO_32;
            words[2 * i + 1] = hi >>> 0;
          } else data[i] = BigInt(v);
        }
      }
      return makeData({ type, length: n, nullCount: validity.nullCount, nullBitmap: validity.bitmap(), data } as never);
    },
  };
}

function boolEncoder(values: ArrayLike<boolean | null>): ColumnEncoder {
  const type = new Bool();
  return {
    type,
    slice(start, end) {
      const n = end - start;
      const data = new Uint8Array(Math.ceil(n / 8));
      const validity = new Validity(n);
      for (let i = 0; i < n; i++) {
        const v = values[start + i];
        if (v === null || v === undefined) validity.setNull(i);
        else if (v) data[i >> 3]! |= 1 << (i & 7);
      }
      return makeData({ type, length: n, nullCount: validity.nullCount, nullBitmap: validity.bitmap(), data });
    },
  };
}

function dictEncoder(values: ArrayLike<string | null>, id: number): ColumnEncoder {
  // One dictionary over the whole column, in order of first appearance: every batch then
  // refers to the same dictionary object and the writer emits it once.
  const codes = new Map<string, number>();
  const indices = new Int32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null || v === undefined) continue;
    let code = codes.get(v);
    if (code === undefined) codes.set(v, (code = codes.size));
    indices[i] = code;
  }
  const words = [...codes.keys()];
  const dictionary: Vector<Utf8> = makeVector(utf8Data(words, 0, words.length));
  const type = new Dictionary(new Utf8(), new Int32(), id, false);
  return {
    type,
    slice(start, end) {
      const n = end - start;
      const validity = new Validity(n);
      for (let i = 0; i < n; i++) {
        const v = values[start + i];
        if (v === null || v === undefined) validity.setNull(i);
      }
      const data = indices.slice(start, end);
      return makeData({ type, length: n, nullCount: validity.nullCount, nullBitmap: validity.bitmap(), data, dictionary });
    },
  };
}
