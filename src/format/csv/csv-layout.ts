import type { ByteWriter } from '../../render/byte-writer.js';
import type { CellWriter } from '../../render/cell-writers.js';
import { compileCsvCell, csvField } from '../../render/csv-rows.js';
import type { Column } from '../../store/column.js';
import type { OutputColumn, PageView } from '../page-view.js';

/**
 * How the rows of one output layout are written as CSV (contract 9): the header of its
 * column names, then one record per output row. A stored column's cell is read at the
 * page's physical row, a computed column's (walk-forward's `decision_date`, vintages'
 * `visible_from` / `visible_to`) at the output position; both use the same cell writers
 * (render/csv-rows.ts). Computed columns belong to a resolver's scratch and may be
 * replaced when it grows, so their writers are bound to the Column of each page (compiled
 * again only when the Column object changed).
 */
export class CsvLayout {
  private readonly header: Buffer;
  private readonly writers: CellWriter[] = [];
  private readonly widths: number[] = [];
  /** 1 where the column is computed (read at output position) */
  private readonly atPosition: Uint8Array;
  private readonly bound: Array<Column | null> = [];
  private maxRowBytes = 0;

  constructor(columns: readonly OutputColumn[]) {
    this.header = Buffer.from(columns.map((c) => csvField(c.column.name)).join(',') + '\n', 'utf8');
    this.atPosition = new Uint8Array(columns.length);
    columns.forEach((c, i) => {
      this.atPosition[i] = c.at === 'position' ? 1 : 0;
      this.writers.push(unbound);
      this.widths.push(0);
      this.bound.push(null);
    });
  }

  write(out: ByteWriter, view: PageView): void {
    this.bind(view.columns);
    out.bytes(this.header);
    const { writers, atPosition, maxRowBytes } = this;
    const rows = view.rows;
    for (let i = 0; i < view.count; i++) {
      out.ensure(maxRowBytes);
      const b = out.buf;
      let p = out.pos;
      const row = rows[i]!;
      for (let c = 0; c < writers.length; c++) {
        if (c > 0) b[p++] = 0x2c;
        p = writers[c]!(b, p, atPosition[c] === 1 ? i : row);
      }
      b[p++] = 0x0a;
      out.pos = p;
    }
  }

  private bind(columns: readonly OutputColumn[]): void {
    let changed = false;
    for (let c = 0; c < columns.length; c++) {
      const column = columns[c]!.column;
      if (this.bound[c] === column) continue;
      const cell = compileCsvCell(column);
      this.bound[c] = column;
      this.writers[c] = cell.write;
      this.widths[c] = cell.maxBytes;
      changed = true;
    }
    if (changed) this.maxRowBytes = this.widths.reduce((sum, w) => sum + w + 1, 2);
  }
}

const unbound: CellWriter = () => {
  throw new Error('internal: a CSV column written before it was bound');
};
