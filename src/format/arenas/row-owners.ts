import type { Column } from '../../store/column.js';
import { ROW_LAYOUT_ALL, RowOwner } from './row-owner.js';

/** Where a registered column sits: its generation's uid, its schema index, and how many columns its table has. */
interface Placed {
  readonly gen: number;
  readonly index: number;
  readonly width: number;
}

/** Layouts of tables wider than this are cached only when they write every column (the tag has 64 layout bits). */
const LAYOUT_BITS = 64;

/**
 * The columns of the generations a serving thread writes, by identity, with their place:
 * what turns a row writer's column list into the RowOwner every thread derives alike. A
 * thread's Column objects are its own (tables are rebuilt from shared memory per thread),
 * so each thread registers its generations; the uid it registers them under is the
 * loading thread's, the same everywhere.
 */
export class RowOwners {
  private readonly placed = new WeakMap<Column, Placed>();
  private readonly tables = new WeakSet<readonly Column[]>();

  /** The columns of generation `gen` (uid), in schema order. Cheap when already known: once per request is fine. */
  register(gen: number, columns: readonly Column[]): void {
    if (this.tables.has(columns)) return;
    this.tables.add(columns);
    for (let i = 0; i < columns.length; i++) this.placed.set(columns[i]!, { gen, index: i, width: columns.length });
  }

  /**
   * The owner of rows written with `columns` (stored columns of one registered table, in
   * schema order) in `format`; null when they cannot be tagged exactly (unregistered,
   * mixed tables, out of order, a projection of a table wider than 64 columns): such rows
   * are rendered every time.
   */
  ownerOf(columns: readonly Column[], format: number): RowOwner | null {
    if (columns.length === 0) return null;
    let gen = 0;
    let width = 0;
    let prev = -1;
    let lo = 0;
    let hi = 0;
    for (const c of columns) {
      const p = this.placed.get(c);
      if (p === undefined) return null;
      if (prev === -1) {
        gen = p.gen;
        width = p.width;
      } else if (p.gen !== gen) return null;
      if (p.index <= prev) return null;
      prev = p.index;
      if (p.index < 32) lo |= 1 << p.index;
      else if (p.index < LAYOUT_BITS) hi |= 1 << (p.index - 32);
    }
    if (columns.length === width) return new RowOwner(gen, 0, 0, format | ROW_LAYOUT_ALL);
    if (width > LAYOUT_BITS) return null;
    return new RowOwner(gen, lo, hi, format);
  }
}
