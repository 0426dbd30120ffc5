/**
 * Fixed-size column buffers that become one Arrow record batch at a time, so a 50M-row
 * snapshot is written without ever holding more than one batch in JS memory. Dictionary
 * columns use one dictionary fixed up front (the file format allows no replacement), which
 * is why src/snapshot/arrow-writer.ts (whole columns in memory) is not reused here.
 */
import {
  Bool,
  DateDay,
  Dictionary,
  Field,
  Float32,
  Float64,
  Int32,
  RecordBatch,
  Schema,
  Struct,
  TimestampMicrosecond,
  TimestampMillisecond,
  TimestampSecond,
  Utf8,
  makeData,
  makeVector,
} from 'apache-arrow';
import type { Data, DataType, Vector } from 'apache-arrow';
import { utf8Data, Validity } from '../../src/snapshot/arrow-buffers.js';

export type BuilderSpec =
  | { name: string; kind: 'date32' }
  | { name: string; kind: 'timestamp'; unit: 's' | 'ms' | 'us' }
  | { name: string; kind: 'utf8' }
  | { name: string; kind: 'dict'; words: readonly string[] }
  | { name: string; kind: 'float64' | 'float32' | 'int32' }
  | { name: string; kind: 'bool' };

const UNIT_US = { s: 1_000_000, ms: 1000, us: 1 } as const;
const TWO_32 = 2 ** 32;

/** One column's buffer. Values are set by row index; NaN / null / code -1 mean null. */
export class ColumnBuffer {
  readonly type: DataType;
  /** date32 days, timestamp µs, numbers (NaN = null), bool 0/1/2 (2 = null), dict codes (-1 = null) */
  readonly num: Float64Array;
  readonly str: (string | null)[];
  private readonly dictionary: Vector<Utf8> | null = null;
  private readonly unitUs: number = 1;

  constructor(
    readonly spec: BuilderSpec,
    id: number,
    capacity: number,
  ) {
    this.num = new Float64Array(spec.kind === 'utf8' ? 0 : capacity);
    this.str = spec.kind === 'utf8' ? new Array<string | null>(capacity).fill(null) : [];
    switch (spec.kind) {
      case 'date32':
        this.type = new DateDay();
        break;
      case 'timestamp':
        this.unitUs = UNIT_US[spec.unit];
        this.type = spec.unit === 's' ? new TimestampSecond('UTC') : spec.unit === 'ms' ? new TimestampMillisecond('UTC') : new TimestampMicrosecond('UTC');
        break;
      case 'utf8':
        this.type = new Utf8();
        break;
      case 'dict':
        // Explicit ids (the column index) keep the bytes the same from run to run.
        this.dictionary = makeVector(utf8Data(spec.words, 0, spec.words.length));
        this.type = new Dictionary(new Utf8(), new Int32(), id, false);
        break;
      case 'float64':
        this.type = new Float64();
        break;
      case 'float32':
        this.type = new Float32();
        break;
      case 'int32':
        this.type = new Int32();
        break;
      case 'bool':
        this.type = new Bool();
        break;
    }
  }

  /** The first `n` rows as Arrow data. */
  finish(n: number): Data {
    const s = this.spec;
    const valid = new Validity(n);
    switch (s.kind) {
      case 'utf8':
        return utf8Data(this.str, 0, n);
      case 'timestamp': {
        const data = new BigInt64Array(n);
        const words = new Uint32Array(data.buffer);
        for (let i = 0; i < n; i++) {
          // Two 32-bit words instead of a BigInt per value: all values are < 2^53.
          const v = this.num[i]! / this.unitUs;
          const hi = Math.floor(v / TWO_32);
          words[2 * i] = v - hi * TWO_32;
          words[2 * i + 1] = hi >>> 0;
        }
        return makeData({ type: this.type as TimestampMicrosecond, length: n, data });
      }
      case 'date32':
        return makeData({ type: this.type as DateDay, length: n, data: Int32Array.from(this.num.subarray(0, n)) });
      case 'dict': {
        const data = new Int32Array(n);
        for (let i = 0; i < n; i++) {
          const c = this.num[i]!;
          if (c < 0) valid.setNull(i);
          else data[i] = c;
        }
        return makeData({
          type: this.type as Dictionary<Utf8, Int32>,
          length: n,
          nullCount: valid.nullCount,
          nullBitmap: valid.bitmap(),
          data,
          dictionary: this.dictionary!,
        });
      }
      case 'bool': {
        const data = new Uint8Array(Math.ceil(n / 8));
        for (let i = 0; i < n; i++) {
          const v = this.num[i]!;
          if (v === 2) valid.setNull(i);
          else if (v === 1) data[i >> 3]! |= 1 << (i & 7);
        }
        return makeData({ type: this.type as Bool, length: n, nullCount: valid.nullCount, nullBitmap: valid.bitmap(), data });
      }
      default: {
        const data = s.kind === 'float64' ? new Float64Array(n) : s.kind === 'float32' ? new Float32Array(n) : new Int32Array(n);
        for (let i = 0; i < n; i++) {
          const v = this.num[i]!;
          if (Number.isNaN(v)) valid.setNull(i);
          else data[i] = v;
        }
        return makeData({ type: this.type, length: n, nullCount: valid.nullCount, nullBitmap: valid.bitmap(), data } as never);
      }
    }
  }
}

export class BatchBuilder {
  readonly columns: ColumnBuffer[];
  readonly schema: Schema;
  private readonly fields: Field[];
  rows = 0;

  constructor(
    specs: readonly BuilderSpec[],
    readonly capacity: number,
    metadata: ReadonlyMap<string, string>,
  ) {
    this.columns = specs.map((s, i) => new ColumnBuffer(s, i, capacity));
    this.fields = this.columns.map((c) => new Field(c.spec.name, c.type, true));
    this.schema = new Schema(this.fields, new Map(metadata));
  }

  get full(): boolean {
    return this.rows === this.capacity;
  }

  /** The buffered rows as a record batch; the buffers are reused for the next one. */
  take(): RecordBatch {
    const n = this.rows;
    const children = this.columns.map((c) => c.finish(n));
    this.rows = 0;
    return new RecordBatch(this.schema, makeData({ type: new Struct(this.fields), length: n, nullCount: 0, children }));
  }
}
