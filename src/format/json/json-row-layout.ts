import type { ByteWriter } from '../bytes/byte-writer.js';
import { compileCell, type CellWriter } from './cell-writers.js';
import { BULK_PAGE_ROWS, type RowCache } from '../arenas/row-cache.js';
import type { RowRenderer } from './row-renderer.js';
import type { Column } from '../../store/column.js';
import type { OutputColumn, PageView } from '../page-view.js';

/** A column computed for one answer (read at output position), bound to that answer's Column when written. */
interface ComputedField {
  /** `"name":` in UTF-8 */
  readonly key: Uint8Array;
  /** the Column its writer was compiled for; a resolver that reuses its Column objects is bound once */
  column: Column | null;
  write: CellWriter;
  maxBytes: number;
}

const unbound: CellWriter = () => {
  throw new Error('internal: a computed column written before it was bound');
};

/**
 * How the rows of one output layout are written as JSON objects: computed prefix columns
 * (walk-forward's `decision_date`), the stored columns (all, or a `columns=` projection, in
 * schema order), computed suffix columns (vintages' `visible_from`, `visible_to`).
 *
 * The stored part is a RowRenderer (straight-line code generated once per table and
 * projection) and goes through the row cache as it is: a walk-forward row is
 * `{"decision_date":"...",` + the stored row's fields, made by writing the stored row
 * `{...}` (from the cache or fresh) right after the prefix fields and turning its `{`
 * into the separating comma; before suffix fields its closing `}` is written over. So
 * every step of a walk-forward shares the cached text of its stored rows. A layout without
 * computed columns is exactly the RowRenderer's own loop, without the cache for a page of
 * more than BULK_PAGE_ROWS rows (row-cache.ts).
 */
export class JsonRowLayout {
  private readonly stored: RowRenderer | null;
  private readonly prefix: ComputedField[] = [];
  private readonly suffix: ComputedField[] = [];
  /** prefix then suffix fields: the order of the layout's computed columns */
  private readonly computed: ComputedField[];
  private maxRowBytes = 0;

  /**
   * `renderer` writes the layout's stored columns (null when it has none); layouts with the
   * same stored columns share one, so their rows share the row cache's text.
   */
  constructor(columns: readonly OutputColumn[], renderer: RowRenderer | null) {
    let stored = 0;
    for (const c of columns) {
      if (c.at === 'row') {
        if (this.suffix.length > 0) throw new Error('internal: a stored column after the computed suffix columns');
        stored++;
      } else {
        const field: ComputedField = { key: Buffer.from(`${JSON.stringify(c.column.name)}:`, 'utf8'), column: null, write: unbound, maxBytes: 0 };
        (stored === 0 ? this.prefix : this.suffix).push(field);
      }
    }
    if ((stored === 0) !== (renderer === null)) throw new Error("internal: a layout's stored columns and its renderer disagree");
    this.stored = renderer;
    this.computed = [...this.prefix, ...this.suffix];
  }

  get hasComputed(): boolean {
    return this.prefix.length + this.suffix.length > 0;
  }

  /** `[row,row,...]` of the view's rows, in order. */
  writeRows(out: ByteWriter, view: PageView, cache: RowCache | null): void {
    const { rows, count } = view;
    const stored = this.stored;
    if (!this.hasComputed && stored !== null) {
      if (cache === null || count > BULK_PAGE_ROWS) stored.writeRows(out, rows, count);
      else stored.writeRowsCached(out, rows, count, cache);
      return;
    }
    this.bind(view.columns);
    const maxRowBytes = this.maxRowBytes;
    out.byte(0x5b);
    for (let i = 0; i < count; i++) {
      out.ensure(maxRowBytes);
      const b = out.buf;
      let p = out.pos;
      if (i > 0) b[p++] = 0x2c;
      out.pos = this.writeRow(b, p, i, rows[i]!, cache);
    }
    out.byte(0x5d);
  }

  /** One row object at p (room reserved): output position i, physical row `row`. */
  private writeRow(b: Buffer, p: number, i: number, row: number, cache: RowCache | null): number {
    const stored = this.stored;
    let fields = 0;
    if (stored === null || this.prefix.length > 0) b[p++] = 0x7b;
    for (const f of this.prefix) {
      if (fields++ > 0) b[p++] = 0x2c;
      p = putKeyAndValue(b, p, f, i);
    }
    if (stored !== null) {
      const at = p;
      p = stored.writeRowAt(b, p, row, cache);
      if (fields++ > 0) b[at] = 0x2c; // its `{` becomes the comma after the prefix fields
      if (this.suffix.length === 0) return p; // closed by the stored row's `}`
      p--; // its `}` comes after the suffix fields
    }
    for (const f of this.suffix) {
      if (fields++ > 0) b[p++] = 0x2c;
      p = putKeyAndValue(b, p, f, i);
    }
    b[p++] = 0x7d;
    return p;
  }

  /** Binds each computed field to this answer's Column (compiling its cell writer only when the Column object changed). */
  private bind(columns: readonly OutputColumn[]): void {
    let changed = false;
    let f = 0;
    const fields = this.computed;
    for (const c of columns) {
      if (c.at !== 'position') continue;
      const field = fields[f++]!;
      if (field.column === c.column) continue;
      const cell = compileCell(c.column);
      field.column = c.column;
      field.write = cell.write;
      field.maxBytes = cell.maxBytes;
      changed = true;
    }
    if (!changed) return;
    let max = 3 + (this.stored?.maxRowBytes ?? 0); // `,{` `}`
    for (const field of fields) max += 1 + field.key.length + field.maxBytes;
    this.maxRowBytes = max;
  }
}

function putKeyAndValue(b: Buffer, p: number, f: ComputedField, i: number): number {
  const key = f.key;
  for (let k = 0; k < key.length; k++) b[p + k] = key[k]!;
  return f.write(b, p + key.length, i);
}
