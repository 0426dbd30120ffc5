import { Bool, Dictionary, Field, Int32, makeData, makeVector, RecordBatch, RecordBatchFileWriter, Schema, Struct, Table, Utf8 } from 'apache-arrow';
import type { Data, DataType } from 'apache-arrow';
import { utf8Data, Validity } from '../snapshot/arrow-buffers.js';
import { fixedWidth, timestampType } from '../snapshot/arrow-types.js';
import { SERIES_KEY_METADATA } from '../snapshot/arrow-writer.js';
import type { DecodedColumn } from '../store/decode-arrow.js';
import { unitScale, type ColumnDef, type DatasetSchema } from './dataset-schema.js';
import type { IngestedRewrite } from './physical-order.js';
import { segmentRows, unifyStrings, type Segment, type UnifiedStrings } from './segment-columns.js';

/**
 * Rows of the segments -> an Arrow IPC file in the dataset's schema, gathered straight from
 * the typed columns: no JS value per cell. The bytes are those snapshot/arrow-writer.ts
 * writes for the same rows (one record batch; nulls as zeros under the validity bits; a
 * dictionary per part in order of first appearance, its id the column's index), so a
 * generation does not depend on which writer produced it.
 *
 * Output position i holds segment row `from(i)`, an index into the segments' rows one
 * after the other.
 */
export class PartWriter {
  private readonly segOf: Uint8Array;
  private readonly rowOf: Int32Array;
  private readonly strings: Array<UnifiedStrings | null>;
  /** UTF-8 bytes of each unified string, encoded on first use */
  private readonly encoded: Array<Array<Uint8Array | undefined> | null>;

  constructor(
    private readonly schema: DatasetSchema,
    private readonly segments: readonly Segment[],
    private readonly ingested: IngestedRewrite | null,
  ) {
    const total = segments.reduce((n, s) => n + segmentRows(s), 0);
    this.segOf = new Uint8Array(total);
    this.rowOf = new Int32Array(total);
    let o = 0;
    segments.forEach((seg, k) => {
      const count = segmentRows(seg);
      this.segOf.fill(k, o, o + count);
      for (let i = 0; i < count; i++, o++) this.rowOf[o] = seg.rows === null ? i : seg.rows[i]!;
    });
    const tables = segments.map((s) => s.table);
    this.strings = schema.columns.map((d) => (d.type === 'utf8' || d.type === 'dict-utf8' ? unifyStrings(tables, d.name) : null));
    this.encoded = this.strings.map((u) => (u === null ? null : new Array<Uint8Array | undefined>(u.values.length)));
  }

  /** Output rows [start, end) as one Arrow IPC file; `from(i)` is the segment row at output position i. */
  write(from: (i: number) => number, start: number, end: number): Uint8Array {
    const n = end - start;
    const at = new Int32Array(n);
    for (let i = 0; i < n; i++) at[i] = from(start + i);
    const types: DataType[] = [];
    const children: Data[] = this.schema.columns.map((def, c) => {
      const { type, data } = this.column(def, c, at);
      types.push(type);
      return data;
    });
    const fields = this.schema.columns.map((def, c) => new Field(def.name, types[c]!, true));
    const metadata = new Map<string, string>([[SERIES_KEY_METADATA, JSON.stringify(this.schema.seriesKey)]]);
    for (const [k, v] of this.schema.metadata) metadata.set(k, v);
    const arrowSchema = new Schema(fields, metadata);
    const struct = makeData({ type: new Struct(fields), length: n, nullCount: 0, children });
    const table = new Table(arrowSchema, [new RecordBatch(arrowSchema, struct)]);
    return new RecordBatchFileWriter().writeAll(table).toUint8Array(true);
  }

  private cols(c: number): DecodedColumn[] {
    return this.segments.map((s) => s.table.columns[c]!);
  }

  private column(def: ColumnDef, c: number, at: Int32Array): { type: DataType; data: Data } {
    const cols = this.cols(c);
    const n = at.length;
    const validity = new Validity(n);
    const valid = (k: number, row: number): boolean => {
      const v = cols[k]!.validity;
      return v === null || v[row] !== 0;
    };
    // Fixed-width columns copy their value as stored, a number or (int64) a bigint.
    const fixed = (type: DataType, out: NumberArray): { type: DataType; data: Data } => {
      const dst = out as { [i: number]: number | bigint };
      for (let i = 0; i < n; i++) {
        const k = this.segOf[at[i]!]!;
        const row = this.rowOf[at[i]!]!;
        if (!valid(k, row)) validity.setNull(i);
        else dst[i] = (cols[k] as { values: ArrayLike<number | bigint> }).values[row]!;
      }
      return { type, data: makeData({ type, length: n, nullCount: validity.nullCount, nullBitmap: validity.bitmap(), data: out } as never) };
    };
    const f = fixedWidth(def.type);
    if (f !== undefined) return fixed(new f[0](), new f[1](n));
    switch (def.type) {
      case 'timestamp':
        return this.timestamps(def, { cols, at, validity, valid });
      case 'bool': {
        const type = new Bool();
        const out = new Uint8Array(Math.ceil(n / 8));
        for (let i = 0; i < n; i++) {
          const k = this.segOf[at[i]!]!;
          const row = this.rowOf[at[i]!]!;
          if (!valid(k, row)) validity.setNull(i);
          else if ((cols[k] as { values: Uint8Array }).values[row] !== 0) out[i >> 3]! |= 1 << (i & 7);
        }
        return { type, data: makeData({ type, length: n, nullCount: validity.nullCount, nullBitmap: validity.bitmap(), data: out }) };
      }
      case 'utf8':
        return { type: new Utf8(), data: this.utf8(c, { cols, at, validity, valid }) };
      case 'dict-utf8':
        return this.dictionary(c, { cols, at, validity, valid });
      default:
        throw new Error(`column ${def.name}: no Arrow writer for type ${def.type}`);
    }
  }

  private timestamps(def: ColumnDef, run: ColumnRun): { type: DataType; data: Data } {
    const { cols, at, validity, valid } = run;
    const n = at.length;
    const unit = def.unit ?? 'us';
    const type = timestampType(unit);
    const scale = unitScale(unit);
    const rewrite = def.name === 'str_ingested_at' ? this.ingested : null;
    const out = new BigInt64Array(n);
    const words = new Uint32Array(out.buffer);
    for (let i = 0; i < n; i++) {
      const o = at[i]!;
      const k = this.segOf[o]!;
      const row = this.rowOf[o]!;
      let us: number;
      if (rewrite !== null && o < rewrite.rows.length && rewrite.rows[o] === 1) us = rewrite.us;
      else if (!valid(k, row)) {
        validity.setNull(i);
        continue;
      } else us = (cols[k] as { values: Float64Array }).values[row]!;
      const v = us / scale;
      if (LITTLE_ENDIAN) {
        const hi = Math.floor(v / TWO_32);
        words[2 * i] = v - hi * TWO_32;
        words[2 * i + 1] = hi >>> 0;
      } else out[i] = BigInt(v);
    }
    return { type, data: makeData({ type, length: n, nullCount: validity.nullCount, nullBitmap: validity.bitmap(), data: out } as never) };
  }

  private unified(c: number, k: number, code: number): number {
    return this.strings[c]!.remaps[k]![code]!;
  }

  private utf8(c: number, run: ColumnRun): Data<Utf8> {
    const { cols, at, validity, valid } = run;
    const n = at.length;
    const values = this.strings[c]!.values;
    const cache = this.encoded[c]!;
    const codes = new Int32Array(n);
    const offsets = new Int32Array(n + 1);
    let total = 0;
    for (let i = 0; i < n; i++) {
      const k = this.segOf[at[i]!]!;
      const row = this.rowOf[at[i]!]!;
      if (!valid(k, row)) {
        validity.setNull(i);
        codes[i] = -1;
      } else {
        const u = this.unified(c, k, (cols[k] as { codes: Int32Array }).codes[row]!);
        codes[i] = u;
        total += (cache[u] ??= ENCODER.encode(values[u]!)).length;
      }
      offsets[i + 1] = total;
    }
    const data = new Uint8Array(total);
    for (let i = 0; i < n; i++) if (codes[i]! >= 0) data.set(cache[codes[i]!]!, offsets[i]!);
    return makeData({ type: new Utf8(), length: n, nullCount: validity.nullCount, nullBitmap: validity.bitmap(), valueOffsets: offsets, data });
  }

  private dictionary(c: number, run: ColumnRun): { type: DataType; data: Data } {
    const { cols, at, validity, valid } = run;
    const n = at.length;
    const values = this.strings[c]!.values;
    const local = new Int32Array(values.length).fill(-1);
    const words: string[] = [];
    const indices = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const k = this.segOf[at[i]!]!;
      const row = this.rowOf[at[i]!]!;
      if (!valid(k, row)) {
        validity.setNull(i);
        continue;
      }
      const u = this.unified(c, k, (cols[k] as { codes: Int32Array }).codes[row]!);
      if (local[u] === -1) local[u] = words.push(values[u]!) - 1;
      indices[i] = local[u]!;
    }
    const dictionary = makeVector(utf8Data(words, 0, words.length));
    const type = new Dictionary(new Utf8(), new Int32(), c, false);
    return { type, data: makeData({ type, length: n, nullCount: validity.nullCount, nullBitmap: validity.bitmap(), data: indices, dictionary }) };
  }
}

/** One output column being written: the segments' columns, the output rows' positions, and their validity. */
interface ColumnRun {
  readonly cols: DecodedColumn[];
  readonly at: Int32Array;
  readonly validity: Validity;
  valid(k: number, row: number): boolean;
}

type NumberArray = Int8Array | Int16Array | Int32Array | Uint8Array | Uint16Array | Uint32Array | Float32Array | Float64Array | BigInt64Array;

const ENCODER = new TextEncoder();
const TWO_32 = 2 ** 32;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
