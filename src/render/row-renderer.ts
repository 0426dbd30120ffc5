import type { Table } from '../store/table.js';
import type { ByteWriter } from './byte-writer.js';
import { compileCell, type CellWriter } from './cell-writers.js';

/**
 * Renders rows of one table (one generation) as a JSON array, without an object per row.
 * Built once per table: every column's writer is chosen here and every key is pre-rendered
 * as bytes (`"date":`, `,"col":`), so the per-row loop only copies and calls.
 */
export class RowRenderer {
  private readonly writers: CellWriter[];
  /** All key prefixes back to back; column c's is keys[keyStart[c] .. keyStart[c+1]). */
  private readonly keys: Uint8Array;
  private readonly keyStart: Int32Array;
  /** Upper bound on one row's bytes, its separating comma included. */
  private readonly maxRowBytes: number;

  constructor(table: Pick<Table, 'columns'>) {
    const columns = table.columns;
    this.writers = [];
    const prefixes: Buffer[] = [];
    let max = 3; // `,{` and `}`
    for (let c = 0; c < columns.length; c++) {
      const column = columns[c]!;
      const cell = compileCell(column);
      const prefix = Buffer.from(`${c === 0 ? '' : ','}${JSON.stringify(column.name)}:`, 'utf8');
      this.writers.push(cell.write);
      prefixes.push(prefix);
      max += prefix.length + cell.maxBytes;
    }
    this.keys = Buffer.concat(prefixes);
    this.keyStart = new Int32Array(columns.length + 1);
    for (let c = 0; c < prefixes.length; c++) this.keyStart[c + 1] = this.keyStart[c]! + prefixes[c]!.length;
    this.maxRowBytes = max;
  }

  /** Writes `[row,row,...]` for the physical row ids rows[0..count), in that order. */
  writeRows(out: ByteWriter, rows: Int32Array, count: number): void {
    const writers = this.writers;
    const ncol = writers.length;
    const keys = this.keys;
    const keyStart = this.keyStart;
    const maxRowBytes = this.maxRowBytes;
    out.byte(0x5b);
    for (let i = 0; i < count; i++) {
      out.ensure(maxRowBytes);
      const b = out.buf;
      let p = out.pos;
      if (i > 0) b[p++] = 0x2c;
      b[p++] = 0x7b;
      const row = rows[i]!;
      for (let c = 0; c < ncol; c++) {
        const end = keyStart[c + 1]!;
        for (let k = keyStart[c]!; k < end; k++) b[p++] = keys[k]!;
        p = writers[c]!(b, p, row);
      }
      b[p++] = 0x7d;
      out.pos = p;
    }
    out.byte(0x5d);
  }
}
