import type { Column } from '../store/column.js';
import type { OutputColumn } from './page-view.js';

/** Distinct layouts (projections x computed columns) kept per table; the oldest goes first. */
export const MAX_LAYOUTS_PER_TABLE = 32;

/**
 * Compiled writers of one kind, one per (table, output layout), found from a PageView's
 * column list: first by the identity of the list (the generation's `outputColumns` is one
 * array, so the default layout costs one WeakMap lookup), else by the layout's shape
 * among that table's layouts, keyed under the layout's first stored Column (it belongs to
 * one table of one generation, so a superseded generation takes its writers with it), at
 * most MAX_LAYOUTS_PER_TABLE per table.
 */
export class LayoutCache<W> {
  private readonly byList = new WeakMap<readonly OutputColumn[], W>();
  private readonly byTable = new WeakMap<Column, Map<string, W>>();
  /** layouts without a stored column hold no table data: one small bounded map for all */
  private readonly computedOnly = new Map<string, W>();

  constructor(private readonly make: (columns: readonly OutputColumn[]) => W) {}

  of(columns: readonly OutputColumn[]): W {
    let w = this.byList.get(columns);
    if (w !== undefined) return w;
    const anchor = columns.find((c) => c.at === 'row')?.column;
    let shapes = anchor === undefined ? this.computedOnly : this.byTable.get(anchor);
    if (shapes === undefined) {
      shapes = new Map();
      this.byTable.set(anchor!, shapes);
    }
    const key = layoutShape(columns);
    w = shapes.get(key);
    if (w === undefined) {
      w = this.make(columns);
      if (shapes.size >= MAX_LAYOUTS_PER_TABLE) shapes.delete(shapes.keys().next().value!);
      shapes.set(key, w);
    }
    this.byList.set(columns, w);
    return w;
  }
}

/** Stored columns by name (unique in a table), computed ones by name and kind (an Arrow passthrough's by its whole type): what compiled writers depend on. */
export function layoutShape(columns: readonly OutputColumn[]): string {
  let key = '';
  for (const { column, at, arrow } of columns)
    key += at === 'row' ? `r${column.name}\u0001` : `p${column.name}\u0002${arrow === undefined ? column.kind : arrow.signature}\u0001`;
  return key;
}
