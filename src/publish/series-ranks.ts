import { compareUtf8 } from '../store/string-dictionary.js';
import { stringsOf, type ChunkedTable } from './chunked-table.js';
import { unifyStrings } from './unified-strings.js';
import type { VersionTable } from './version-table.js';

/**
 * Each series of some tables (the stored generation, the input) as a number: its rank in
 * the server's series order (UTF-8 bytes of the key values, column by column; contract 14),
 * computed from a row's key codes whenever it is asked for, so that no series number is kept
 * per row. One key column: the rank of the value. Several: the ranks of the values read as
 * one mixed-radix number (which orders as the columns do), made dense by a table or a map
 * over the series that occur.
 */
export class SeriesRanks {
  /** ranks are in [0, count) */
  readonly count: number;
  /** per table, per key column: rank of each of the table's codes among the column's values */
  private readonly rankOfCode: Int32Array[][];
  private readonly keyColumns: number[];
  private readonly radix: number[];
  private readonly dense: Int32Array | Map<number, number> | null;

  constructor(tables: readonly ChunkedTable[], seriesKey: readonly string[]) {
    const schema = tables[0]!.schema;
    this.keyColumns = seriesKey.map((name) => schema.columns.findIndex((c) => c.name === name));
    this.rankOfCode = tables.map(() => []);
    this.radix = [];
    for (const name of seriesKey) {
      const unified = unifyStrings(tables.map((t) => stringsOf(t, name)));
      const rank = utf8Ranks(unified.values);
      tables.forEach((_, k) => this.rankOfCode[k]!.push(unified.remaps[k]!.map((u) => rank[u]!)));
      this.radix.push(Math.max(1, unified.values.length));
    }
    if (seriesKey.length === 1) {
      this.dense = null;
      this.count = this.radix[0]!;
      return;
    }
    const size = this.radix.reduce((a, b) => a * b, 1);
    if (size >= 2 ** 53) throw new Error(`the series key ${seriesKey.join(',')} has too many combinations of values to order`);
    // The combinations that occur, numbered in their order.
    const scratch = new Float64Array(maxChunkRows(tables));
    if (size <= LUT_SIZE) {
      const lut = new Int32Array(size);
      tables.forEach((t, k) => {
        for (const chunk of t.chunks) {
          this.mixed(k, chunk, scratch);
          for (let i = 0; i < chunk.rows; i++) lut[scratch[i]!] = 1;
        }
      });
      let next = 0;
      for (let x = 0; x < size; x++) lut[x] = lut[x] === 1 ? next++ : -1;
      this.dense = lut;
      this.count = next;
    } else {
      const seen = new Map<number, number>();
      tables.forEach((t, k) => {
        for (const chunk of t.chunks) {
          this.mixed(k, chunk, scratch);
          for (let i = 0; i < chunk.rows; i++) seen.set(scratch[i]!, 0);
        }
      });
      const sorted = Float64Array.from(seen.keys()).sort();
      sorted.forEach((x, r) => seen.set(x, r));
      this.dense = seen;
      this.count = sorted.length;
    }
  }

  /** out[i] = the series rank of the chunk's row i; `table` is the chunk's table's index in the constructor's list. */
  fill(table: number, chunk: VersionTable, out: Int32Array): void {
    const n = chunk.rows;
    if (this.dense === null) {
      const rank = this.rankOfCode[table]![0]!;
      const codes = (chunk.columns[this.keyColumns[0]!] as { codes: Int32Array }).codes;
      for (let i = 0; i < n; i++) out[i] = rank[codes[i]!]!;
      return;
    }
    const x = this.scratch.length >= n ? this.scratch : (this.scratch = new Float64Array(n));
    this.mixed(table, chunk, x);
    const dense = this.dense;
    if (dense instanceof Int32Array) for (let i = 0; i < n; i++) out[i] = dense[x[i]!]!;
    else for (let i = 0; i < n; i++) out[i] = dense.get(x[i]!)!;
  }

  private scratch = new Float64Array(0);

  private mixed(table: number, chunk: VersionTable, out: Float64Array): void {
    const n = chunk.rows;
    out.fill(0, 0, n);
    this.keyColumns.forEach((c, j) => {
      const rank = this.rankOfCode[table]![j]!;
      const radix = this.radix[j]!;
      const codes = (chunk.columns[c] as { codes: Int32Array }).codes;
      for (let i = 0; i < n; i++) out[i] = out[i]! * radix + rank[codes[i]!]!;
    });
  }
}

/** Up to this many combinations of key values, they are numbered through a table (4 MiB). */
const LUT_SIZE = 1 << 20;

export function maxChunkRows(tables: readonly ChunkedTable[]): number {
  let most = 0;
  for (const t of tables) for (const c of t.chunks) most = Math.max(most, c.rows);
  return most;
}

/** rank[code] of each distinct value, by UTF-8 byte order. */
function utf8Ranks(values: readonly string[]): Int32Array {
  const order = values.map((_, i) => i).sort((a, b) => compareUtf8(values[a]!, values[b]!));
  const rank = new Int32Array(values.length);
  order.forEach((code, r) => (rank[code] = r));
  return rank;
}
