import type { ByteWriter } from '../bytes/byte-writer.js';
import type { CellWriter } from '../json/cell-writers.js';
import { compileCsvCell, csvField } from './csv-cells.js';
import { BULK_PAGE_ROWS, type RowCache } from '../arenas/row-cache.js';
import { ROW_FORMAT_CSV, type RowOwner } from '../arenas/row-owner.js';
import type { Column } from '../../store/column.js';
import type { OutputColumn, PageView } from '../page-view.js';

/**
 * How the rows of one output layout are written as CSV (contract 9): the header of its
 * column names, then one record per output row. A stored column's cell is read at the
 * page's physical row, a computed column's (walk-forward's `decision_date`, vintages'
 * `visible_from` / `visible_to`) at the output position; both use the same cell writers
 * (csv-cells.ts). Computed columns belong to a resolver's scratch and may be
 * replaced when it grows, so their writers are bound to the Column of each page (compiled
 * again only when the Column object changed).
 *
 * With a row cache, the stored cells of a record (`a,b,c`: one contiguous run between
 * the computed prefix and suffix) go through it as one text, tagged CSV, so consecutive
 * walk-forward steps copy them as the JSON writer does.
 */
export class CsvLayout {
  private readonly header: Buffer;
  private readonly writers: CellWriter[] = [];
  private readonly widths: number[] = [];
  /** 1 where the column is computed (read at output position) */
  private readonly atPosition: Uint8Array;
  private readonly bound: Array<Column | null> = [];
  private maxRowBytes = 0;
  /** the stored cells are columns [firstStored, endStored) */
  private readonly firstStored: number;
  private readonly endStored: number;
  /** the stored cells' tag in the row cache; null: not cached */
  private readonly owner: RowOwner | null;
  private dvOf: Buffer | null = null;
  private dv: DataView = new DataView(new ArrayBuffer(0));

  constructor(
    columns: readonly OutputColumn[],
    private readonly cache: RowCache | null = null,
  ) {
    this.header = Buffer.from(columns.map((c) => csvField(c.column.name)).join(',') + '\n', 'utf8');
    this.atPosition = new Uint8Array(columns.length);
    columns.forEach((c, i) => {
      this.atPosition[i] = c.at === 'position' ? 1 : 0;
      this.writers.push(unbound);
      this.widths.push(0);
      this.bound.push(null);
    });
    this.firstStored = columns.findIndex((c) => c.at === 'row');
    this.endStored = columns.length - [...columns].reverse().findIndex((c) => c.at === 'row');
    const stored = columns.slice(this.firstStored, this.endStored);
    const contiguous = this.firstStored >= 0 && stored.every((c) => c.at === 'row');
    this.owner =
      contiguous && cache !== null
        ? cache.owners.ownerOf(
            stored.map((c) => c.column),
            ROW_FORMAT_CSV,
          )
        : null;
  }

  /** The header of the column names. */
  writeHeader(out: ByteWriter): void {
    out.bytes(this.header);
  }

  /** One record per output row of the view, in order. */
  writeRecords(out: ByteWriter, view: PageView): void {
    this.bind(view.columns);
    // A bulk page of stored cells alone goes straight (BULK_PAGE_ROWS, row-cache.ts).
    if (this.owner !== null && (view.count <= BULK_PAGE_ROWS || this.firstStored > 0 || this.endStored < this.writers.length)) {
      this.writeCached(out, view, this.owner, this.cache!);
      return;
    }
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

  /** write's records with the stored cells copied from the row cache, or written and kept there. */
  private writeCached(out: ByteWriter, view: PageView, owner: RowOwner, cache: RowCache): void {
    const { writers, maxRowBytes, firstStored, endStored } = this;
    const n = writers.length;
    const rows = view.rows;
    for (let i = 0; i < view.count; i++) {
      out.ensure(maxRowBytes);
      const b = out.buf;
      const dv = this.viewOf(b);
      let p = out.pos;
      const row = rows[i]!;
      for (let c = 0; c < firstStored; c++) {
        p = writers[c]!(b, p, i);
        b[p++] = 0x2c;
      }
      const copied = cache.copy(owner, row, dv, p);
      if (copied >= 0) p = copied;
      else {
        const start = p;
        for (let c = firstStored; c < endStored; c++) {
          if (c > firstStored) b[p++] = 0x2c;
          p = writers[c]!(b, p, row);
        }
        cache.keep(owner, row, dv, start, p);
      }
      for (let c = endStored; c < n; c++) {
        b[p++] = 0x2c;
        p = writers[c]!(b, p, i);
      }
      b[p++] = 0x0a;
      out.pos = p;
    }
  }

  /** A DataView of the output buffer, remade only when the writer has grown into a new one. */
  private viewOf(b: Buffer): DataView {
    if (this.dvOf !== b) {
      this.dvOf = b;
      this.dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    }
    return this.dv;
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
