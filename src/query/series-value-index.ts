import type { StringColumn } from '../store/column.js';
import type { Table } from '../store/table.js';

/**
 * Per series-key column of one table: the series holding each value, ascending. Series of
 * code c are series[start[c] .. start[c+1]).
 */
export interface ValueIndex {
  readonly start: Int32Array;
  readonly series: Int32Array;
}

/**
 * The value indexes of one generation's table, owned by its Generation and built on first
 * use per column (O(series) once), so a filtered request touches only the series it names.
 * Per thread: each serving thread's Generation builds its own the first time it needs it.
 */
export class SeriesValueIndex {
  private readonly byColumn = new Map<StringColumn, ValueIndex>();

  constructor(private readonly table: Table) {}

  of(col: StringColumn): ValueIndex {
    let idx = this.byColumn.get(col);
    if (idx === undefined) {
      idx = build(this.table, col);
      this.byColumn.set(col, idx);
    }
    return idx;
  }
}

function build(table: Table, col: StringColumn): ValueIndex {
  const n = col.dict.values.length;
  const s = table.seriesCount;
  const start = new Int32Array(n + 1);
  const firstRow = (i: number): number => table.keyRowStart[table.seriesKeyStart[i]!]!;
  for (let i = 0; i < s; i++) start[col.codes[firstRow(i)]! + 1]!++;
  for (let c = 0; c < n; c++) start[c + 1]! += start[c]!;
  const fill = start.slice(0, n);
  const series = new Int32Array(s);
  for (let i = 0; i < s; i++) series[fill[col.codes[firstRow(i)]!]!++] = i;
  return { start, series };
}
