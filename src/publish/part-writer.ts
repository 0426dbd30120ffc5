import { Bool, Dictionary, Field, Int32, makeData, makeVector, RecordBatch, RecordBatchFileWriter, Schema, Struct, Table, Utf8 } from 'apache-arrow';
import type { Data, DataType } from 'apache-arrow';
import { utf8Data, Validity } from '../snapshot/arrow-buffers.js';
import { fixedWidth, timestampType } from '../snapshot/arrow-types.js';
import { SERIES_KEY_METADATA } from '../snapshot/arrow-writer.js';
import type { DecodedColumn } from '../store/decode-arrow.js';
import { unitScale, type ColumnDef, type DatasetSchema } from './dataset-schema.js';
import type { Restamp } from './series-order.js';
import type { Collected } from './series-rows.js';
import type { UnifiedStrings } from './unified-strings.js';
import type { VersionTable } from './version-table.js';

/**
 * Rows of the sources -> an Arrow IPC file in the dataset's schema, gathered straight from
 * the typed columns of their chunks: no JS value per cell. The bytes are those
 * snapshot/arrow-writer.ts writes for the same rows (one record batch; nulls as zeros under
 * the validity bits; a dictionary per part in order of first appearance, its id the column's
 * index), so a generation does not depend on which writer produced it.
 *
 * Output position i holds collected row `order[i]` (series-rows.ts): row `rowOf[j]` of chunk
 * `chunkOf[j]`.
 */
export class PartWriter {
  /** UTF-8 bytes of each unified string, encoded on first use */
  private readonly encoded: Array<Array<Uint8Array | undefined> | null>;

  constructor(
    private readonly schema: DatasetSchema,
    private readonly chunks: readonly VersionTable[],
    /** which source (the index into each UnifiedStrings' remaps) each chunk is of */
    private readonly chunkSource: Uint8Array,
    private readonly strings: ReadonlyArray<UnifiedStrings | null>,
  ) {
    this.encoded = this.strings.map((u) => (u === null ? null : new Array<Uint8Array | undefined>(u.values.length)));
  }

  /** The collected rows, in `c.order`, as one Arrow IPC file; `restamp` rewrites str_ingested_at of the rows it flags. */
  write(c: Collected, restamp: Restamp | null): Uint8Array {
    const n = c.rows;
    const at = c.order;
    this.chunkOf = c.chunkOf;
    this.rowOf = c.rowOf;
    this.restamp = restamp;
    const types: DataType[] = [];
    const children: Data[] = this.schema.columns.map((def, col) => {
      const { type, data } = this.column(def, col, at);
      types.push(type);
      return data;
    });
    this.chunkOf = this.rowOf = EMPTY;
    this.restamp = null;
    const fields = this.schema.columns.map((def, col) => new Field(def.name, types[col]!, true));
    const metadata = new Map<string, string>([[SERIES_KEY_METADATA, JSON.stringify(this.schema.seriesKey)]]);
    for (const [k, v] of this.schema.metadata) metadata.set(k, v);
    const arrowSchema = new Schema(fields, metadata);
    const struct = makeData({ type: new Struct(fields), length: n, nullCount: 0, children });
    const table = new Table(arrowSchema, [new RecordBatch(arrowSchema, struct)]);
    return new RecordBatchFileWriter().writeAll(table).toUint8Array(true);
  }

  /** of the part being written: chunk and row of each collected row, and the restamped rows */
  private chunkOf: Int32Array = EMPTY;
  private rowOf: Int32Array = EMPTY;
  private restamp: Restamp | null = null;

  private cols(c: number): DecodedColumn[] {
    return this.chunks.map((ch) => ch.columns[c]!);
  }

  private column(def: ColumnDef, c: number, at: Int32Array): { type: DataType; data: Data } {
    const cols = this.cols(c);
    const n = at.length;
    const validity = new Validity(n);
    // Per chunk, the typed arrays themselves: one array kind per column, so the loops below stay monomorphic.
    const validities = cols.map((col) => col.validity);
    const values = cols.map((col) => (col.kind === 'string' ? col.codes : col.values));
    const valid = (k: number, row: number): boolean => {
      const v = validities[k]!;
      return v === null || v[row] !== 0;
    };
    const { chunkOf, rowOf } = this;
    // Fixed-width columns copy their value as stored, a number or (int64) a bigint.
    const fixed = (type: DataType, out: NumberArray): { type: DataType; data: Data } => {
      const dst = out as { [i: number]: number | bigint };
      for (let i = 0; i < n; i++) {
        const k = chunkOf[at[i]!]!;
        const row = rowOf[at[i]!]!;
        if (!valid(k, row)) validity.setNull(i);
        else dst[i] = (values[k] as ArrayLike<number | bigint>)[row]!;
      }
      return { type, data: makeData({ type, length: n, nullCount: validity.nullCount, nullBitmap: validity.bitmap(), data: out } as never) };
    };
    const f = fixedWidth(def.type);
    if (f !== undefined) return fixed(new f[0](), new f[1](n));
    switch (def.type) {
      case 'timestamp':
        return this.timestamps(def, { values, at, validity, valid });
      case 'bool': {
        const type = new Bool();
        const out = new Uint8Array(Math.ceil(n / 8));
        for (let i = 0; i < n; i++) {
          const k = chunkOf[at[i]!]!;
          const row = rowOf[at[i]!]!;
          if (!valid(k, row)) validity.setNull(i);
          else if ((values[k] as Uint8Array)[row] !== 0) out[i >> 3]! |= 1 << (i & 7);
        }
        return { type, data: makeData({ type, length: n, nullCount: validity.nullCount, nullBitmap: validity.bitmap(), data: out }) };
      }
      case 'utf8':
        return { type: new Utf8(), data: this.utf8(c, { values, at, validity, valid }) };
      case 'dict-utf8':
        return this.dictionary(c, { values, at, validity, valid });
      default:
        throw new Error(`column ${def.name}: no Arrow writer for type ${def.type}`);
    }
  }

  private timestamps(def: ColumnDef, run: ColumnRun): { type: DataType; data: Data } {
    const { values, at, validity, valid } = run;
    const { chunkOf, rowOf } = this;
    const n = at.length;
    const unit = def.unit ?? 'us';
    const type = timestampType(unit);
    const scale = unitScale(unit);
    const rewrite = def.name === 'str_ingested_at' ? this.restamp : null;
    const out = new BigInt64Array(n);
    const words = new Uint32Array(out.buffer);
    for (let i = 0; i < n; i++) {
      const o = at[i]!;
      const k = chunkOf[o]!;
      const row = rowOf[o]!;
      let us: number;
      if (rewrite !== null && rewrite.rows[o] === 1) us = rewrite.us;
      else if (!valid(k, row)) {
        validity.setNull(i);
        continue;
      } else us = (values[k] as Float64Array)[row]!;
      const v = us / scale;
      if (LITTLE_ENDIAN) {
        const hi = Math.floor(v / TWO_32);
        words[2 * i] = v - hi * TWO_32;
        words[2 * i + 1] = hi >>> 0;
      } else out[i] = BigInt(v);
    }
    return { type, data: makeData({ type, length: n, nullCount: validity.nullCount, nullBitmap: validity.bitmap(), data: out } as never) };
  }

  private utf8(c: number, run: ColumnRun): Data<Utf8> {
    const { values: codesOf, at, validity, valid } = run;
    const { chunkOf, rowOf, chunkSource } = this;
    const remaps = this.strings[c]!.remaps;
    const n = at.length;
    const values = this.strings[c]!.values;
    const cache = this.encoded[c]!;
    const codes = new Int32Array(n);
    const offsets = new Int32Array(n + 1);
    let total = 0;
    for (let i = 0; i < n; i++) {
      const k = chunkOf[at[i]!]!;
      const row = rowOf[at[i]!]!;
      if (!valid(k, row)) {
        validity.setNull(i);
        codes[i] = -1;
      } else {
        const u = remaps[chunkSource[k]!]![(codesOf[k] as Int32Array)[row]!]!;
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
    const { values: codesOf, at, validity, valid } = run;
    const { chunkOf, rowOf, chunkSource } = this;
    const remaps = this.strings[c]!.remaps;
    const n = at.length;
    const values = this.strings[c]!.values;
    const local = new Int32Array(values.length).fill(-1);
    const words: string[] = [];
    const indices = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const k = chunkOf[at[i]!]!;
      const row = rowOf[at[i]!]!;
      if (!valid(k, row)) {
        validity.setNull(i);
        continue;
      }
      const u = remaps[chunkSource[k]!]![(codesOf[k] as Int32Array)[row]!]!;
      if (local[u] === -1) local[u] = words.push(values[u]!) - 1;
      indices[i] = local[u]!;
    }
    const dictionary = makeVector(utf8Data(words, 0, words.length));
    const type = new Dictionary(new Utf8(), new Int32(), c, false);
    return { type, data: makeData({ type, length: n, nullCount: validity.nullCount, nullBitmap: validity.bitmap(), data: indices, dictionary }) };
  }
}

/** One output column being written: the chunks' columns, the output rows' positions, and their validity. */
interface ColumnRun {
  /** per chunk: its values (strings: codes) */
  readonly values: ReadonlyArray<ArrayLike<number | bigint>>;
  readonly at: Int32Array;
  readonly validity: Validity;
  valid(k: number, row: number): boolean;
}

type NumberArray = Int8Array | Int16Array | Int32Array | Uint8Array | Uint16Array | Uint32Array | Float32Array | Float64Array | BigInt64Array;

const ENCODER = new TextEncoder();
const EMPTY = new Int32Array(0);
const TWO_32 = 2 ** 32;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
