import type { Column } from '../store/column.js';
import type { ArrowPassthrough } from './arrow-passthrough.js';

/**
 * The seam between "what rows" and "how they are written" (docs/decisions.md#rows-and-writers).
 *
 * A query resolves to a PageView: the physical row ids of one page, in output order, and
 * the columns to write. Every format writer (JSON, CSV, Arrow) takes the same PageView, so
 * the three formats cannot disagree on rows, order or columns.
 *
 * An output column is either a stored column of the generation's table, read at the
 * page's physical row (`at: 'row'`, value of output row i is column[rows[i]]), or a column
 * computed for this answer (`at: 'position'`, value of output row i is column[i]): the
 * walk-forward's `decision_date` and the vintages' `visible_from` / `visible_to`.
 * Computed columns use the same Column shapes as stored ones (Date32Column,
 * TimestampColumn with unit 'us', validity for nulls), so writers need no special cases.
 */
export interface OutputColumn {
  readonly column: Column;
  readonly at: 'row' | 'position';
  /**
   * Arrow answers only: the column as given in an Arrow body (a join's event column, its
   * type kept: arrow-passthrough.ts), written from these buffers instead of from `column`,
   * of which only the name is read. Computed (`at: 'position'`) columns only.
   */
  readonly arrow?: ArrowPassthrough;
}

export interface PageView {
  /** in output order: computed prefix columns, then stored columns in schema order (projected), then computed suffix columns */
  readonly columns: readonly OutputColumn[];
  /** physical row ids; only [0, count) is meaningful (may be a view into scratch memory reused by the next request) */
  readonly rows: Int32Array;
  readonly count: number;
  /** the dataset's series-key column names (Arrow schema metadata `pitcache.series_key`) */
  readonly seriesKey: readonly string[];
}
